package admission

import (
	"fmt"
	"strings"

	v1 "k8s.io/api/core/v1"
)

// UnsupportedPodSpec is the reason of a pod refused because it asks for something nodelet
// cannot do as the upstream kubelet would (nodelet's own reason: upstream has no such refusal).
const UnsupportedPodSpec = "UnsupportedPodSpec"

// UnsupportedField is one field whose values, or some of them, nodelet refuses.
type UnsupportedField struct {
	// Field is the field as a JSON path pattern, e.g. "spec.containers[].resizePolicy";
	// spec.containers[] stands for every container: init, regular and ephemeral.
	Field string
	// Why is what the message says after the field's path: which value is refused and why.
	Why string
}

// unsupportedRule refuses one field's values.
type unsupportedRule struct {
	UnsupportedField
	// find returns the paths in pod where the field has a refused value, e.g.
	// "spec.initContainers[1].resizePolicy".
	find func(pod *v1.Pod) []string
}

// Unsupported refuses a pod that sets a field to a value nodelet cannot honour, so that the
// pod ends Failed with reason UnsupportedPodSpec instead of running differently from what it
// asks. The message names every such field with its path and says why: "spec.hostUsers:
// false needs user namespaces, which nodelet does not support yet". Values nodelet honours
// (hostUsers true or unset, procMount Default...) are admitted. UnsupportedFields lists what
// is checked; docs/pod-fields.md shows it with everything nodelet honours.
func Unsupported(pod *v1.Pod) Result {
	var msgs []string
	for _, r := range unsupportedRules() {
		for _, path := range r.find(pod) {
			msgs = append(msgs, path+": "+r.Why)
		}
	}
	if len(msgs) == 0 {
		return Result{Admit: true}
	}
	return Result{Reason: UnsupportedPodSpec, Message: strings.Join(msgs, "; ")}
}

// UnsupportedFields lists the fields Unsupported checks, in the order it checks them.
func UnsupportedFields() []UnsupportedField {
	rules := unsupportedRules()
	out := make([]UnsupportedField, len(rules))
	for i, r := range rules {
		out[i] = r.UnsupportedField
	}
	return out
}

// podRule builds a rule from a predicate on the pod spec: the field itself is the finding.
func podRule(field, why string, refused func(spec *v1.PodSpec) bool) unsupportedRule {
	return unsupportedRule{UnsupportedField{field, why}, func(pod *v1.Pod) []string {
		if refused(&pod.Spec) {
			return []string{field}
		}
		return nil
	}}
}

// containerRule builds a rule from a function that returns, for one container, the paths
// below it (e.g. "env[2].valueFrom.fileKeyRef") where it sets a refused value. Every container
// is checked: init, regular and ephemeral.
func containerRule(field, why string, find func(c *v1.Container) []string) unsupportedRule {
	return unsupportedRule{UnsupportedField{field, why}, func(pod *v1.Pod) []string {
		var out []string
		for _, list := range []struct {
			name       string
			containers []*v1.Container
		}{{"initContainers", ptrs(pod.Spec.InitContainers)}, {"containers", ptrs(pod.Spec.Containers)}, {"ephemeralContainers", ephemeralPtrs(pod)}} {
			for i, c := range list.containers {
				for _, sub := range find(c) {
					out = append(out, fmt.Sprintf("spec.%s[%d].%s", list.name, i, sub))
				}
			}
		}
		return out
	}}
}

// volumeRule builds a rule from a function that returns, for one volume, the paths below it
// (e.g. "emptyDir.sizeLimit") where it sets a refused value.
func volumeRule(field, why string, find func(v *v1.Volume) []string) unsupportedRule {
	return unsupportedRule{UnsupportedField{field, why}, func(pod *v1.Pod) []string {
		var out []string
		for i := range pod.Spec.Volumes {
			for _, sub := range find(&pod.Spec.Volumes[i]) {
				out = append(out, fmt.Sprintf("spec.volumes[%d].%s", i, sub))
			}
		}
		return out
	}}
}

// when returns path when set is true: the finding of a field with one refused value.
func when(set bool, path string) []string {
	if set {
		return []string{path}
	}
	return nil
}

func ptrs(list []v1.Container) []*v1.Container {
	out := make([]*v1.Container, len(list))
	for i := range list {
		out[i] = &list[i]
	}
	return out
}

func ephemeralPtrs(pod *v1.Pod) []*v1.Container {
	out := make([]*v1.Container, len(pod.Spec.EphemeralContainers))
	for i := range pod.Spec.EphemeralContainers {
		out[i] = (*v1.Container)(&pod.Spec.EphemeralContainers[i].EphemeralContainerCommon)
	}
	return out
}
