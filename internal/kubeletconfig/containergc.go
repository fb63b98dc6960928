package kubeletconfig

import (
	"fmt"
	"time"

	"github.com/spf13/pflag"
)

// ContainerGC is the container garbage collection policy: upstream's flags-only KubeletFlags
// (cmd/kubelet/app/options/options.go; deprecated there in favour of eviction, yet still
// honoured), and nodelet's period.
type ContainerGC struct {
	// MinAge is --minimum-container-ttl-duration (default 0).
	MinAge time.Duration
	// MaxPerPodContainer is --maximum-dead-containers-per-container (default 1; negative: no limit).
	MaxPerPodContainer int32
	// MaxContainers is --maximum-dead-containers (default -1: no limit).
	MaxContainers int32
	// Period is --container-gc-period (nodelet only): upstream's fixed ContainerGCPeriod, 1 minute,
	// by default.
	Period time.Duration
}

const containerGCDeprecated = " (Deprecated upstream: use --eviction-hard or --eviction-soft instead.)"

// register sets upstream's defaults and registers the flags.
func (c *ContainerGC) register(fs *pflag.FlagSet) {
	*c = ContainerGC{MaxPerPodContainer: 1, MaxContainers: -1, Period: time.Minute}
	fs.DurationVar(&c.MinAge, "minimum-container-ttl-duration", c.MinAge,
		"Minimum age for a finished container before it is garbage collected.  Examples: '300ms', '10s' or '2h45m'"+containerGCDeprecated)
	fs.Int32Var(&c.MaxPerPodContainer, "maximum-dead-containers-per-container", c.MaxPerPodContainer,
		"Maximum number of old instances to retain per container.  Each container takes up some disk space."+containerGCDeprecated)
	fs.Int32Var(&c.MaxContainers, "maximum-dead-containers", c.MaxContainers,
		"Maximum number of old instances of containers to retain globally.  Each container takes up some disk space. To disable, set to a negative number."+containerGCDeprecated)
	fs.DurationVar(&c.Period, "container-gc-period", c.Period,
		"nodelet only (the kubelet's is fixed at 1m): how often dead containers, unused sandboxes and the log directories of removed pods are garbage collected.")
}

// validate refuses what upstream's NewContainerGC refuses (a negative minimum age) and a
// period that is not positive; negative counts mean no limit.
func (c ContainerGC) validate() error {
	if c.MinAge < 0 {
		return fmt.Errorf("--minimum-container-ttl-duration: must not be negative, got %v", c.MinAge)
	}
	if c.Period <= 0 {
		return fmt.Errorf("--container-gc-period: must be greater than 0, got %v", c.Period)
	}
	return nil
}
