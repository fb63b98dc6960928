package kubeletconfig

import (
	"fmt"
	"sort"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// ResourceList parses a resource map of the configuration (kubeReserved, systemReserved:
// {"cpu": "100m", "memory": "256Mi"}); an error names the field and the key.
func ResourceList(field string, m map[string]string) (v1.ResourceList, error) {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := v1.ResourceList{}
	for _, k := range keys {
		q, err := resource.ParseQuantity(m[k])
		if err != nil {
			return nil, fmt.Errorf("%s[%s]: invalid quantity %q: %w", field, k, m[k], err)
		}
		if q.Sign() < 0 {
			return nil, fmt.Errorf("%s[%s]: %q must not be negative", field, k, m[k])
		}
		out[v1.ResourceName(k)] = q
	}
	return out, nil
}
