package podfields

import (
	"fmt"
	"strings"

	"github.com/nodelet/nodelet/internal/admission"
)

// section is a part of the page: the fields whose path starts with one of prefixes (the
// Pod section has the others).
type section struct {
	title    string
	prefixes []string
}

// sections are the page's parts, in its order.
func sections() []section {
	return []section{
		{"Pod", nil},
		{"Pod security context", []string{"spec.securityContext."}},
		{"Containers and init containers", []string{"spec.initContainers", "spec.containers[]."}},
		{"Ephemeral containers", []string{"spec.ephemeralContainers[]."}},
		{"Volumes", []string{"spec.volumes[]."}},
	}
}

// sectionOf is the title of the section a field belongs to.
func sectionOf(path string) string {
	for _, s := range sections() {
		for _, p := range s.prefixes {
			if strings.HasPrefix(path, p) {
				return s.title
			}
		}
	}
	return "Pod"
}

// Markdown renders the table as docs/pod-fields.md: one section per part of the pod, the
// fields in the API's order (Walk's), each with what nodelet does and the test that shows it.
func Markdown(fields []Field) string {
	byPath := map[string]Field{}
	for _, f := range fields {
		byPath[f.Path] = f
	}
	why := map[string]string{}
	for _, u := range admission.UnsupportedFields() {
		why[u.Field] = u.Why
	}
	counts := map[string]int{}
	for _, f := range fields {
		counts[kind(f)]++
	}
	var b strings.Builder
	b.WriteString("# What nodelet does with each field of a pod\n\n")
	b.WriteString("<!-- Generated from internal/podfields by `go test ./internal/podfields -update`; do not edit. -->\n\n")
	b.WriteString("nodelet's rule: every field a user sets in a pod is honoured as the upstream kubelet v1.37 honours it, or\n" +
		"refused with a clear reason, never silently dropped. This page is that rule field by field, generated from\n" +
		"the table in `internal/podfields`, whose test walks every field of `v1.PodSpec` by reflection and fails\n" +
		"until a new field of `k8s.io/api` is classified. Each honoured field names a test that shows it; each\n" +
		"refused value says what the user sees. A pod refused by nodelet's admission ends `Failed` with the reason\n" +
		"and a message naming each field at fault, e.g. `UnsupportedPodSpec`: `spec.hostUsers: false needs user\n" +
		"namespaces, which nodelet does not support yet`.\n\n")
	fmt.Fprintf(&b, "%d fields: %d honoured (**yes**), %d honoured but for some values (**partly**), %d refused (**no**), "+
		"%d used only by the control plane (nodelet rightly does nothing with them).\n\n",
		len(fields), counts["yes"], counts["partly"], counts["no"], counts["control plane"])
	b.WriteString("`spec.containers[]` stands for `spec.initContainers[]` too; a field marked → has the fields listed at\n" +
		"the place it names.\n")
	for _, s := range sections() {
		fmt.Fprintf(&b, "\n## %s\n\n| field | nodelet | shown by | refused: what the user sees | how |\n|---|---|---|---|---|\n", s.title)
		for _, af := range Walk() {
			if sectionOf(af.Path) != s.title {
				continue
			}
			f := byPath[af.Path]
			path := "`" + af.Path + "`"
			if af.SameAs != "" {
				path += " → `" + af.SameAs + "`"
			}
			refusal := f.Refused
			if refusal == Unsupported {
				refusal = "`UnsupportedPodSpec`: " + why[admissionField(f.Path)]
			}
			test := ""
			if f.Test != "" {
				test = "`" + f.Test + "`"
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", path, f.Status(), test, cell(refusal), cell(f.Note))
		}
	}
	return b.String()
}

// kind is the summary's class of a field.
func kind(f Field) string {
	if f.ControlPlane != "" {
		return "control plane"
	}
	return f.Status()
}

// admissionField is the admission.UnsupportedFields name of a field: spec.containers[] stands
// for every kind of container there.
func admissionField(path string) string {
	if rest, ok := strings.CutPrefix(path, "spec.ephemeralContainers[]."); ok {
		return "spec.containers[]." + rest
	}
	return path
}

// cell escapes text for a Markdown table cell.
func cell(s string) string { return strings.ReplaceAll(s, "|", `\|`) }
