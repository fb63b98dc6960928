//go:build ignore

// gen.go writes internal/cli/testdata/describe-pod.golden: what `kubectl describe pod` (the
// real k8s.io/kubectl/pkg/describe at the reference version, over a fake clientset) prints for
// the pod and events of internal/cli/testdata/describe-pod.json. internal/cli's TestDescribe
// compares `nodelet describe pod` with it. It runs in hack/controlplane/k8s, the module that
// requires k8s.io/kubernetes (and so kubectl) at that version:
//
//	make cligolden
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/kubectl/pkg/describe"
)

func main() {
	b, err := os.ReadFile(os.Args[1])
	if err != nil {
		fail(err)
	}
	var fixture struct {
		Pod    v1.Pod       `json:"pod"`
		Events v1.EventList `json:"events"`
	}
	if err := json.Unmarshal(b, &fixture); err != nil {
		fail(err)
	}
	client := fake.NewSimpleClientset(&fixture.Pod)
	for i := range fixture.Events.Items {
		if _, err := client.CoreV1().Events(fixture.Pod.Namespace).Create(context.Background(), &fixture.Events.Items[i], metav1.CreateOptions{}); err != nil {
			fail(err)
		}
	}
	d := describe.PodDescriber{Interface: client}
	out, err := d.Describe(fixture.Pod.Namespace, fixture.Pod.Name, describe.DescriberSettings{ShowEvents: true, ChunkSize: 500})
	if err != nil {
		fail(err)
	}
	fmt.Print(out)
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, err)
	os.Exit(1)
}
