package logrotation

import (
	"errors"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
)

// Upstream's KubeletConfiguration defaults (pkg/kubelet/apis/config/v1beta1/defaults.go).
const (
	DefaultMaxSize         int64 = 10 * 1024 * 1024 // containerLogMaxSize "10Mi"
	DefaultMaxFiles              = 5                // containerLogMaxFiles
	DefaultMonitorInterval       = 10 * time.Second // containerLogMonitorInterval
	DefaultMaxWorkers            = 1                // containerLogMaxWorkers
)

// minMonitorInterval is upstream's lower bound on containerLogMonitorInterval.
const minMonitorInterval = 3 * time.Second

// Config is the rotation policy, shared by every container.
type Config struct {
	// MaxSize is the size in bytes at which a container's log is rotated (containerLogMaxSize).
	// A negative size disables rotation; Clean still works.
	MaxSize int64
	// MaxFiles is the most log files, current and rotated, a container keeps
	// (containerLogMaxFiles); at least 2.
	MaxFiles int
	// MonitorInterval is the time between checks of the log sizes
	// (containerLogMonitorInterval); at least 3s.
	MonitorInterval time.Duration
	// MaxWorkers is how many containers are rotated at once (containerLogMaxWorkers); at least 1.
	MaxWorkers int
}

// DefaultConfig returns upstream's defaults.
func DefaultConfig() Config {
	return Config{
		MaxSize:         DefaultMaxSize,
		MaxFiles:        DefaultMaxFiles,
		MonitorInterval: DefaultMonitorInterval,
		MaxWorkers:      DefaultMaxWorkers,
	}
}

// Validate applies upstream's checks (pkg/kubelet/apis/config/validation and
// NewContainerLogManager); each error names the KubeletConfiguration field.
func (c Config) Validate() error {
	var errs []error
	if c.MaxFiles <= 1 {
		errs = append(errs, fmt.Errorf("containerLogMaxFiles must be greater than 1, got %d", c.MaxFiles))
	}
	if c.MonitorInterval < minMonitorInterval {
		errs = append(errs, fmt.Errorf("containerLogMonitorInterval must be a positive time duration greater than or equal to %v, got %v",
			minMonitorInterval, c.MonitorInterval))
	}
	if c.MaxWorkers < 1 {
		errs = append(errs, fmt.Errorf("containerLogMaxWorkers must be greater than or equal to 1, got %d", c.MaxWorkers))
	}
	return errors.Join(errs...)
}

// ParseMaxSize parses a containerLogMaxSize quantity such as "10Mi" into bytes, as upstream.
func ParseMaxSize(size string) (int64, error) {
	q, err := resource.ParseQuantity(size)
	if err != nil {
		return 0, fmt.Errorf("containerLogMaxSize %q: %w", size, err)
	}
	n, ok := q.AsInt64()
	if !ok {
		return 0, fmt.Errorf("containerLogMaxSize %q: not representable as a whole number of bytes", size)
	}
	return n, nil
}
