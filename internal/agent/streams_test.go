package agent

import (
	"context"
	"errors"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nodelet/nodelet/internal/container"
	"github.com/nodelet/nodelet/internal/podconfig"
	"github.com/nodelet/nodelet/internal/server"
)

type fakeDesired map[string]*v1.Pod

var _ podByName = fakeDesired(nil)

func (f fakeDesired) ByFullName(name, namespace string) (*v1.Pod, bool) {
	p, ok := f[namespace+"/"+name]
	return p, ok
}

type fakeRuntimePods []*container.Pod

var _ runtimeLister = fakeRuntimePods(nil)

func (f fakeRuntimePods) GetPods(context.Context) ([]*container.Pod, error) { return f, nil }

func TestRuntimeTargets(t *testing.T) {
	web := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", UID: "u-web"},
		Spec: v1.PodSpec{Containers: []v1.Container{{Name: "app", TTY: true}, {Name: "log"}}}}
	static := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "etcd-n1", Namespace: "kube-system", UID: "u-static",
		Annotations: map[string]string{podconfig.ConfigSourceAnnotationKey: podconfig.FileSource}}}
	gone := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "gone", Namespace: "default", UID: "u-gone"}}
	tg := &runtimeTargets{pods: fakeDesired{"default/web": web, "kube-system/etcd-n1": static, "default/gone": gone}, lister: fakeRuntimePods{
		{ID: "u-web", Name: "web", Namespace: "default",
			Sandboxes: []*container.Container{{ID: "s-old", State: container.StateExited, CreatedAt: 1}, {ID: "s-new", State: container.StateRunning, CreatedAt: 2}},
			Containers: []*container.Container{{ID: "c-app-0", Name: "app", State: container.StateExited, Image: "busybox"},
				{ID: "c-app-1", Name: "app", State: container.StateRunning, Image: "busybox"}, {ID: "c-log", Name: "log", State: container.StateExited}}},
		{ID: "u-static", Name: "etcd-n1", Namespace: "kube-system", Sandboxes: []*container.Container{{ID: "s-static", State: container.StateRunning}}},
		{ID: "u-orphan", Name: "orphan", Namespace: "default", Sandboxes: []*container.Container{{ID: "s-orphan", State: container.StateExited}}},
	}}

	ctx := context.Background()
	if got, err := tg.RunningContainer(ctx, "default", "web", "", "app"); err != nil || got != (server.ContainerTarget{ID: "c-app-1", TTY: true}) {
		t.Errorf("app: %+v, %v; want the running instance with the spec's tty", got, err)
	}
	for _, tc := range []struct{ ns, pod, uid, c string }{
		{"default", "web", "", "log"},         // exited
		{"default", "web", "", "nope"},        // no such container
		{"default", "web", "u-other", "app"},  // another pod of that name
		{"default", "nope", "", "app"},        // not a desired pod
		{"default", "gone", "", "app"},        // desired, nothing in the runtime
		{"default", "orphan", "", "whatever"}, // in the runtime, not desired
	} {
		if _, err := tg.RunningContainer(ctx, tc.ns, tc.pod, "", tc.c); tc.uid == "" && !errors.Is(err, server.ErrNotFound) {
			t.Errorf("%+v: %v, want ErrNotFound", tc, err)
		}
		if _, err := tg.RunningContainer(ctx, tc.ns, tc.pod, "u-other", tc.c); !errors.Is(err, server.ErrNotFound) {
			t.Errorf("%+v with a foreign UID: %v, want ErrNotFound", tc, err)
		}
	}
	if got, err := tg.Sandbox(ctx, "default", "web", "u-web"); err != nil || got != "s-new" {
		t.Errorf("sandbox: %q, %v; want the ready one", got, err)
	}
	// A static pod is reached with its mirror pod's UID, which differs.
	if got, err := tg.Sandbox(ctx, "kube-system", "etcd-n1", "u-mirror"); err != nil || got != "s-static" {
		t.Errorf("static pod sandbox by mirror UID: %q, %v", got, err)
	}
	running, err := tg.RunningPods(ctx)
	if err != nil || len(running) != 2 {
		t.Fatalf("running pods: %d, %v; want web and the static pod", len(running), err)
	}
	if c := running[0].Spec.Containers; running[0].Name != "web" || len(c) != 1 || c[0].Name != "app" || c[0].Image != "busybox" {
		t.Errorf("running pod web: %+v", running[0])
	}
}
