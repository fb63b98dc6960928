package eviction

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
)

// DefaultEvictionHard is upstream's evictionHard on Linux when the configuration sets none.
func DefaultEvictionHard() map[string]string {
	return map[string]string{
		"memory.available":   "100Mi",
		"nodefs.available":   "10%",
		"nodefs.inodesFree":  "5%",
		"imagefs.available":  "15%",
		"imagefs.inodesFree": "5%",
	}
}

// ThresholdValue is a quantity or a fraction (0..1] of the signal's capacity.
type ThresholdValue struct {
	Quantity   *resource.Quantity
	Percentage float32
}

// Of is the value as a quantity of the capacity.
func (v ThresholdValue) Of(capacity resource.Quantity) resource.Quantity {
	if v.Quantity != nil {
		return v.Quantity.DeepCopy()
	}
	return *resource.NewQuantity(int64(float64(v.Percentage)*float64(capacity.Value())), resource.BinarySI)
}

func (v ThresholdValue) String() string {
	if v.Quantity != nil {
		return v.Quantity.String()
	}
	return strconv.FormatFloat(math.Round(float64(v.Percentage)*1e6)/1e4, 'f', -1, 64) + "%"
}

// Threshold is one eviction threshold: the signal is met when its available amount falls
// below Value. GracePeriod 0 is a hard threshold; MinReclaim is how much beyond Value must be
// available again before the threshold is resolved.
type Threshold struct {
	Signal      Signal
	Value       ThresholdValue
	GracePeriod time.Duration
	MinReclaim  *ThresholdValue
}

// Hard says the threshold acts at once (evictionHard).
func (t Threshold) Hard() bool { return t.GracePeriod == 0 }

// key identifies a threshold among the configured ones: one hard and one soft per signal.
type key struct {
	signal Signal
	soft   bool
}

func (t Threshold) key() key { return key{t.Signal, !t.Hard()} }

func (t Threshold) String() string {
	kind := "hard"
	if !t.Hard() {
		kind = "soft, grace period " + t.GracePeriod.String()
	}
	return fmt.Sprintf("%s<%s (%s)", t.Signal, t.Value, kind)
}

// Settings are the eviction fields of the KubeletConfiguration, as the file or flags give them.
type Settings struct {
	Hard, Soft, SoftGracePeriod, MinimumReclaim map[string]string
	// EnforceNodeAllocatable is enforceNodeAllocatable: with "pods", every hard memory.available
	// threshold is also an allocatableMemory.available one, as upstream.
	EnforceNodeAllocatable []string
}

// Parse is upstream's ParseThresholdConfig: the thresholds of the settings, each error naming
// the field (evictionHard, evictionSoft, evictionSoftGracePeriod, evictionMinimumReclaim) and
// the signal. 0% and 100% thresholds are ignored, as upstream.
func Parse(s Settings) ([]Threshold, error) {
	hard, err := parseStatements("evictionHard", s.Hard)
	if err != nil {
		return nil, err
	}
	soft, err := parseStatements("evictionSoft", s.Soft)
	if err != nil {
		return nil, err
	}
	grace, err := parseGracePeriods(s.SoftGracePeriod)
	if err != nil {
		return nil, err
	}
	reclaims, err := parseMinimumReclaims(s.MinimumReclaim)
	if err != nil {
		return nil, err
	}
	for i := range soft {
		period, ok := grace[soft[i].Signal]
		if !ok {
			return nil, fmt.Errorf("evictionSoftGracePeriod: grace period must be specified for the soft eviction threshold %v", soft[i].Signal)
		}
		if period == 0 {
			// A zero grace period would make the soft threshold a second hard one.
			period = time.Nanosecond
		}
		soft[i].GracePeriod = period
	}
	out := append(hard, soft...)
	for i := range out {
		if r, ok := reclaims[out[i].Signal]; ok {
			out[i].MinReclaim = &r
		}
	}
	for _, k := range s.EnforceNodeAllocatable {
		if k != "pods" {
			continue
		}
		for _, t := range out {
			if t.Signal == SignalMemoryAvailable && t.Hard() {
				out = append(out, Threshold{Signal: SignalAllocatableMemoryAvailable, Value: t.Value, MinReclaim: t.MinReclaim})
			}
		}
		break
	}
	return out, nil
}

// sortedKeys makes errors and results deterministic.
func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func validSignal(field, name string) (Signal, error) {
	s := Signal(name)
	if _, ok := resourceOf(s); !ok {
		return "", fmt.Errorf("%s: unsupported eviction signal %q (known: memory.available, allocatableMemory.available, "+
			"nodefs.available, nodefs.inodesFree, imagefs.available, imagefs.inodesFree, containerfs.available, "+
			"containerfs.inodesFree, pid.available)", field, name)
	}
	return s, nil
}

func parseStatements(field string, statements map[string]string) ([]Threshold, error) {
	var out []Threshold
	for _, name := range sortedKeys(statements) {
		signal, err := validSignal(field, name)
		if err != nil {
			return nil, err
		}
		val := strings.TrimSpace(statements[name])
		if strings.HasSuffix(val, "%") {
			if val == "0%" || val == "100%" {
				continue
			}
			p, err := parsePercentage(val)
			if err != nil {
				return nil, fmt.Errorf("%s[%s]: %w", field, name, err)
			}
			if p < 0 {
				return nil, fmt.Errorf("%s[%s]: eviction percentage threshold must be >= 0%%: %s", field, name, val)
			}
			if p > 1 {
				return nil, fmt.Errorf("%s[%s]: eviction percentage threshold must be <= 100%%: %s", field, name, val)
			}
			out = append(out, Threshold{Signal: signal, Value: ThresholdValue{Percentage: p}})
			continue
		}
		q, err := resource.ParseQuantity(val)
		if err != nil {
			return nil, fmt.Errorf("%s[%s]: %q is neither a quantity nor a percentage: %w", field, name, val, err)
		}
		if q.Sign() <= 0 {
			return nil, fmt.Errorf("%s[%s]: eviction threshold must be positive: %s", field, name, q.String())
		}
		out = append(out, Threshold{Signal: signal, Value: ThresholdValue{Quantity: &q}})
	}
	return out, nil
}

func parsePercentage(val string) (float32, error) {
	f, err := strconv.ParseFloat(strings.TrimSuffix(val, "%"), 32)
	if err != nil {
		return 0, fmt.Errorf("%q is not a percentage: %w", val, err)
	}
	return float32(f) / 100, nil
}

func parseGracePeriods(statements map[string]string) (map[Signal]time.Duration, error) {
	out := map[Signal]time.Duration{}
	for _, name := range sortedKeys(statements) {
		signal, err := validSignal("evictionSoftGracePeriod", name)
		if err != nil {
			return nil, err
		}
		d, err := time.ParseDuration(statements[name])
		if err != nil {
			return nil, fmt.Errorf("evictionSoftGracePeriod[%s]: %w", name, err)
		}
		if d < 0 {
			return nil, fmt.Errorf("evictionSoftGracePeriod[%s]: invalid eviction grace period %v, must be a positive value", name, statements[name])
		}
		out[signal] = d
	}
	return out, nil
}

func parseMinimumReclaims(statements map[string]string) (map[Signal]ThresholdValue, error) {
	out := map[Signal]ThresholdValue{}
	for _, name := range sortedKeys(statements) {
		signal, err := validSignal("evictionMinimumReclaim", name)
		if err != nil {
			return nil, err
		}
		val := strings.TrimSpace(statements[name])
		if strings.HasSuffix(val, "%") {
			p, err := parsePercentage(val)
			if err != nil {
				return nil, fmt.Errorf("evictionMinimumReclaim[%s]: %w", name, err)
			}
			if p <= 0 || p > 1 {
				return nil, fmt.Errorf("evictionMinimumReclaim[%s]: eviction percentage minimum reclaim must be positive and at most 100%%: %s", name, val)
			}
			out[signal] = ThresholdValue{Percentage: p}
			continue
		}
		q, err := resource.ParseQuantity(val)
		if err != nil {
			return nil, fmt.Errorf("evictionMinimumReclaim[%s]: %q is neither a quantity nor a percentage: %w", name, val, err)
		}
		if q.Sign() < 0 {
			return nil, fmt.Errorf("evictionMinimumReclaim[%s]: negative eviction minimum reclaim %s", name, q.String())
		}
		out[signal] = ThresholdValue{Quantity: &q}
	}
	return out, nil
}

// WithContainerFs is upstream's UpdateContainerFsThresholds: containerfs.* thresholds follow
// nodefs.* on a single filesystem and imagefs.* with a dedicated image filesystem; configured
// containerfs.* thresholds are replaced (upstream ignores them, with a warning).
func WithContainerFs(thresholds []Threshold, dedicatedImageFs bool) []Threshold {
	avail, inodes := SignalNodeFsAvailable, SignalNodeFsInodesFree
	if dedicatedImageFs {
		avail, inodes = SignalImageFsAvailable, SignalImageFsInodesFree
	}
	var out []Threshold
	for _, t := range thresholds {
		if t.Signal != SignalContainerFsAvailable && t.Signal != SignalContainerFsInodesFree {
			out = append(out, t)
		}
	}
	for _, t := range out {
		switch t.Signal {
		case avail:
			t.Signal = SignalContainerFsAvailable
		case inodes:
			t.Signal = SignalContainerFsInodesFree
		default:
			continue
		}
		out = append(out, t)
	}
	return out
}
