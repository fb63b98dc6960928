package apiobjects

import (
	"context"
	"github.com/nodelet/nodelet/internal/fakekube"
	"slices"
	"testing"
	"testing/synctest"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/utils/clock"
)

func service(ns, name, ip string) *v1.Service {
	return &v1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: v1.ServiceSpec{ClusterIP: ip, Ports: []v1.ServicePort{{Port: 80}}}}
}

func serviceNames(s *Services) ([]string, bool) {
	list, synced := s.Services()
	var names []string
	for _, svc := range list {
		names = append(names, svc.Namespace+"/"+svc.Name)
	}
	slices.Sort(names)
	return names, synced
}

func TestServicesListsWatchesAndSyncs(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		client := fake.NewClientset(service("default", "kubernetes", "10.0.0.1"), service("app", "web", "10.0.0.7"))
		block := make(chan struct{})
		var selectors []string
		client.PrependReactor("list", "services", func(a k8stesting.Action) (bool, runtime.Object, error) {
			<-block // the first list is slow: nothing is synced until it answers
			selectors = append(selectors, a.(k8stesting.ListAction).GetListRestrictions().Fields.String())
			return false, nil, nil
		})
		s, err := NewServices(fakekube.Core(client), clock.RealClock{})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan struct{})
		go func() { defer close(done); s.Run(ctx) }()
		defer func() { cancel(); <-done }()

		synctest.Wait()
		if names, synced := serviceNames(s); synced || len(names) != 0 {
			t.Fatalf("before the first list: %v synced=%v, want none and not synced", names, synced)
		}
		close(block)
		synctest.Wait()
		if names, synced := serviceNames(s); !synced || !slices.Equal(names, []string{"app/web", "default/kubernetes"}) {
			t.Fatalf("after the list: %v synced=%v", names, synced)
		}
		if want := []string{"spec.clusterIP!=None"}; !slices.Equal(selectors, want) {
			t.Errorf("list field selectors %q, want %q (headless services are not watched)", selectors, want)
		}

		// Watch events: a new service, a deleted one.
		if _, err := client.CoreV1().Services("app").Create(ctx, service("app", "db", "10.0.0.8"), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if err := client.CoreV1().Services("app").Delete(ctx, "web", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		if names, _ := serviceNames(s); !slices.Equal(names, []string{"app/db", "default/kubernetes"}) {
			t.Errorf("after watch events: %v", names)
		}
	})
}

func TestNewServicesNeedsClientAndClock(t *testing.T) {
	if _, err := NewServices(nil, clock.RealClock{}); err == nil {
		t.Error("no client: no error")
	}
	if _, err := NewServices(fakekube.Core(fake.NewClientset()), nil); err == nil {
		t.Error("no clock: no error")
	}
}
