package podfields

import (
	"strings"

	"github.com/nodelet/nodelet/internal/admission"
)

// Field is what nodelet does with one field of a pod.
type Field struct {
	// Path is the field's JSON path, as Walk lists it: "spec.securityContext.sysctls",
	// "spec.containers[].resizePolicy" (spec.containers[] also stands for spec.initContainers[]).
	Path string
	// Test names a Go test of the repository (func Test...) that shows nodelet honouring the
	// field as the upstream kubelet does (an end-to-end test on containerd where one exists),
	// or, for a field only the control plane uses, that nodelet rightly does nothing with it.
	// Empty when nodelet honours no value of the field.
	Test string
	// Refused says which values nodelet refuses although upstream honours them (or, for the
	// fields upstream's validation forbids, that the API server refuses them), and what the
	// user then sees; empty when it refuses none. Unsupported means internal/admission's
	// Unsupported check: the pod ends Failed with reason UnsupportedPodSpec and the message of
	// admission.UnsupportedFields.
	Refused string
	// ControlPlane names who uses a field nodelet has nothing to do with ("scheduler", "API
	// server", "controllers"); empty for the node's fields.
	ControlPlane string
	// Note says briefly how nodelet honours the field, or where upstream itself refuses values.
	Note string
}

// Unsupported is the Refused of a field refused by internal/admission's Unsupported check.
const Unsupported = admission.UnsupportedPodSpec

// Status is the one word that says how nodelet treats the field: "yes" (honoured as
// upstream), "partly" (some values refused), "no" (refused), or "<who>'s field".
func (f Field) Status() string {
	switch {
	case strings.HasSuffix(f.ControlPlane, "s"):
		return f.ControlPlane + "' field"
	case f.ControlPlane != "":
		return f.ControlPlane + "'s field"
	case f.Refused == "":
		return "yes"
	case f.Test == "":
		return "no"
	}
	return "partly"
}

// honoured is a field nodelet honours as upstream, shown by test.
func honoured(path, test, note string) Field { return Field{Path: path, Test: test, Note: note} }

// partly is a field nodelet honours as upstream, shown by test, except the values refused.
func partly(path, test, why, note string) Field {
	return Field{Path: path, Test: test, Refused: why, Note: note}
}

// refused is a field nodelet refuses whatever its value.
func refused(path, why, note string) Field { return Field{Path: path, Refused: why, Note: note} }

// controlPlane is a field only who uses: nodelet rightly does nothing, which test shows.
func controlPlane(path, who, test, note string) Field {
	return Field{Path: path, Test: test, ControlPlane: who, Note: note}
}

// Fields is the whole table: every field Walk lists, with what nodelet does with it.
func Fields() []Field {
	var out []Field
	for _, part := range [][]Field{podFields(), securityFields(), containerFields(), probeFields(), ephemeralFields(), volumeFields()} {
		out = append(out, part...)
	}
	return out
}
