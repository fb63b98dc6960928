package container

import (
	"testing"

	v1 "k8s.io/api/core/v1"
)

// upstreamHashAppBusybox135 was computed by upstream's own code (v1.37.1 pkg/util/hash/hash.go
// and kubecontainer.HashContainer, copied verbatim into a scratch program) for name "app", image
// "busybox:1.35". It pins byte-for-byte compatibility of the hash label.
const upstreamHashAppBusybox135 uint64 = 334941216

func TestHashContainerMatchesUpstream(t *testing.T) {
	a := HashContainer(&v1.Container{Name: "app", Image: "busybox:1.35"})
	b := HashContainer(&v1.Container{Name: "app", Image: "busybox:1.35", Command: []string{"sh"}})
	c := HashContainer(&v1.Container{Name: "app", Image: "busybox:1.36"})
	if a != b {
		t.Error("fields other than name and image must not change the hash, as upstream")
	}
	if a == c {
		t.Error("a new image must change the hash")
	}
	if a > 1<<32-1 {
		t.Errorf("hash %d is wider than upstream's 32 bits", a)
	}
	if want := upstreamHashAppBusybox135; a != want {
		t.Errorf("HashContainer = %d, upstream gives %d", a, want)
	}
}
