package kuberuntime

import (
	"fmt"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
)

// fakeClasses resolves RuntimeClasses from a map; a missing name is an error.
type fakeClasses map[string]string

var _ RuntimeHandlerResolver = fakeClasses(nil)

func (f fakeClasses) LookupRuntimeHandler(name *string) (string, error) {
	if name == nil || *name == "" {
		return "", nil
	}
	h, ok := f[*name]
	if !ok {
		return "", fmt.Errorf(`runtimeclasses.node.k8s.io %q not found`, *name)
	}
	return h, nil
}

// The pod's RuntimeClass picks the sandbox's runtime handler, as upstream's createPodSandbox;
// a class that cannot be resolved creates no sandbox and says why in FailedCreatePodSandBox.
func TestSyncPodRuntimeClass(t *testing.T) {
	for _, tc := range []struct {
		name        string
		class       *string
		classes     RuntimeHandlerResolver
		wantHandler string
		wantErr     string
	}{
		{name: "no class: the default handler", classes: fakeClasses{"alt": "runc-alt"}},
		{name: "empty class: the default handler", class: ptr.To(""), classes: fakeClasses{}},
		{name: "no class without a resolver", classes: nil},
		{name: "a class: its handler", class: ptr.To("alt"), classes: fakeClasses{"alt": "runc-alt"}, wantHandler: "runc-alt"},
		{name: "an unknown class", class: ptr.To("gone"), classes: fakeClasses{}, wantErr: `runtimeclasses.node.k8s.io "gone" not found`},
		{name: "a class without a resolver (standalone)", class: ptr.To("alt"), wantErr: "no API server to read RuntimeClasses from"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			h.m.deps.RuntimeClasses = tc.classes
			pod := newPod(mod(func(p *v1.Pod) { p.Spec.RuntimeClassName = tc.class }))
			res := h.sync(pod)
			if tc.wantErr != "" {
				if res.Err == nil || !strings.Contains(res.Err.Error(), tc.wantErr) {
					t.Fatalf("SyncPod error %v, want one with %q", res.Err, tc.wantErr)
				}
				if n := h.rt.CallCount("RunPodSandbox"); n != 0 {
					t.Errorf("%d sandboxes run with an unresolved class", n)
				}
				msgs := h.rec.messages("FailedCreatePodSandBox")
				if len(msgs) != 1 || !strings.HasPrefix(msgs[0], "Failed to create pod sandbox: ") || !strings.Contains(msgs[0], tc.wantErr) {
					t.Errorf("events %q, want one FailedCreatePodSandBox naming %q", msgs, tc.wantErr)
				}
				return
			}
			if res.Err != nil {
				t.Fatal(res.Err)
			}
			st, _ := h.rt.Sandbox(sandboxID(pod, 0))
			if st == nil || st.RuntimeHandler != tc.wantHandler {
				t.Errorf("sandbox %v, want runtime handler %q", st, tc.wantHandler)
			}
		})
	}
}
