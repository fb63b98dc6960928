package apiobjects

import (
	"context"
	"github.com/nodelet/nodelet/internal/fakekube"
	"strings"
	"testing"
	"testing/synctest"

	nodev1 "k8s.io/api/node/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
)

func runtimeClass(name, handler string) *nodev1.RuntimeClass {
	return &nodev1.RuntimeClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Handler: handler}
}

func TestRuntimeClassesLookupRuntimeHandler(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		client := fake.NewClientset(runtimeClass("gvisor", "runsc"))
		block := make(chan struct{})
		client.PrependReactor("list", "runtimeclasses", func(k8stesting.Action) (bool, runtime.Object, error) {
			<-block
			return false, nil, nil
		})
		r, err := NewRuntimeClasses(fakekube.RuntimeClasses(client), clock.RealClock{})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan struct{})
		go func() { defer close(done); r.Run(ctx) }()
		defer func() { cancel(); <-done }()

		synctest.Wait()
		// No class: the runtime's default handler, listed or not.
		for _, name := range []*string{nil, ptr.To("")} {
			if h, err := r.LookupRuntimeHandler(name); h != "" || err != nil {
				t.Errorf("LookupRuntimeHandler(%v) = %q, %v; want the default handler", name, h, err)
			}
		}
		if h, err := r.LookupRuntimeHandler(ptr.To("gvisor")); err == nil || !strings.Contains(err.Error(), "not yet been read") {
			t.Errorf("before the first list: %q, %v; want an error that says the classes are not read yet", h, err)
		}
		close(block)
		synctest.Wait()
		if h, err := r.LookupRuntimeHandler(ptr.To("gvisor")); h != "runsc" || err != nil {
			t.Errorf("gvisor: %q, %v; want runsc", h, err)
		}
		_, err = r.LookupRuntimeHandler(ptr.To("kata"))
		if !apierrors.IsNotFound(err) || err.Error() != `runtimeclasses.node.k8s.io "kata" not found` {
			t.Errorf("unknown class: %v; want upstream's NotFound", err)
		}

		// A class created, changed and deleted after the list.
		classes := client.NodeV1().RuntimeClasses()
		if _, err := classes.Create(ctx, runtimeClass("kata", "kata-qemu"), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if err := classes.Delete(ctx, "gvisor", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		if h, err := r.LookupRuntimeHandler(ptr.To("kata")); h != "kata-qemu" || err != nil {
			t.Errorf("created kata: %q, %v", h, err)
		}
		if _, err := r.LookupRuntimeHandler(ptr.To("gvisor")); !apierrors.IsNotFound(err) {
			t.Errorf("deleted gvisor: %v; want NotFound", err)
		}
	})
}

func TestNewRuntimeClassesNeedsClientAndClock(t *testing.T) {
	if _, err := NewRuntimeClasses(nil, clock.RealClock{}); err == nil {
		t.Error("no client: no error")
	}
	if _, err := NewRuntimeClasses(fakekube.RuntimeClasses(fake.NewClientset()), nil); err == nil {
		t.Error("no clock: no error")
	}
}
