package kubeletconfig

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/component-base/featuregate"
)

// validateFeatureGates checks featureGates (the file's, the drop-ins' and --feature-gates) as
// the upstream kubelet's feature gate does (featuregate.SetFromMap over the gates it knows,
// upstreamFeatureGates): an unknown gate, or a locked gate set against its lock, is an error
// naming the gate. Deprecated gates are accepted with featuregate's warning in the log.
func validateFeatureGates(gates map[string]bool) field.ErrorList {
	var errs field.ErrorList
	names := make([]string, 0, len(gates))
	for name := range gates {
		names = append(names, name)
	}
	slices.Sort(names)
	fg := featuregate.NewFeatureGate()
	if err := fg.Add(upstreamFeatureGates); err != nil {
		// The generated table is constant: this is a bug in it.
		return append(errs, field.InternalError(field.NewPath("featureGates"), err))
	}
	for _, name := range names {
		// One gate at a time, so that each error names its key (a refused one sets nothing).
		if err := fg.SetFromMap(map[string]bool{name: gates[name]}); err != nil {
			errs = append(errs, field.Invalid(field.NewPath("featureGates").Key(name), gates[name], err.Error()))
		}
	}
	return errs
}

// gateMap is the --feature-gates flag (upstream's cliflag.MapStringBool on featureGates):
// "Gate=true,Other=false"; the flag may be repeated, each adding its gates.
type gateMap map[string]bool

func (m *gateMap) Type() string { return "mapStringBool" }

func (m *gateMap) String() string {
	keys := make([]string, 0, len(*m))
	for k := range *m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, k+"="+strconv.FormatBool((*m)[k]))
	}
	return strings.Join(parts, ",")
}

func (m *gateMap) Set(s string) error {
	if *m == nil {
		*m = map[string]bool{}
	}
	for _, pair := range strings.Split(s, ",") {
		pair = strings.TrimSpace(pair)
		if pair == "" {
			continue
		}
		k, v, ok := strings.Cut(pair, "=")
		if !ok {
			return fmt.Errorf("malformed pair %q, expect string=bool", pair)
		}
		b, err := strconv.ParseBool(strings.TrimSpace(v))
		if err != nil {
			return fmt.Errorf("invalid value of %s: %s, err: %w", k, v, err)
		}
		(*m)[strings.TrimSpace(k)] = b
	}
	return nil
}
