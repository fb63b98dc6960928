package kubeclient

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
)

// apiServer answers every request with a JSON object of the kind the path asks for, and
// records what it was asked.
type apiServer struct {
	mu       sync.Mutex
	requests []string // "METHOD path?query content-type"
}

func (a *apiServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	a.mu.Lock()
	a.requests = append(a.requests, r.Method+" "+r.URL.RequestURI()+" "+r.Header.Get("Content-Type"))
	a.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	switch {
	case strings.HasSuffix(r.URL.Path, "/token"):
		var tr authenticationv1.TokenRequest
		_ = json.Unmarshal(body, &tr)
		tr.Status.Token = "t0k3n"
		tr.APIVersion, tr.Kind = "authentication.k8s.io/v1", "TokenRequest"
		_ = json.NewEncoder(w).Encode(&tr)
	case strings.Contains(r.URL.Path, "/events"):
		_, _ = w.Write(body)
	case strings.HasSuffix(r.URL.Path, "/pods"):
		_ = json.NewEncoder(w).Encode(&corev1.PodList{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "PodList"},
			Items: []corev1.Pod{{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"}}}})
	default:
		_ = json.NewEncoder(w).Encode(&corev1.Pod{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
			ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", UID: "u1"}})
	}
}

func (a *apiServer) took() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := a.requests
	a.requests = nil
	return out
}

// serve starts an apiServer for the test and returns it with clients that talk to it.
func serve(t *testing.T) (*apiServer, *Clients) {
	t.Helper()
	srv := &apiServer{}
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	c, err := New(&rest.Config{Host: ts.URL})
	if err != nil {
		t.Fatal(err)
	}
	return srv, c
}

// TestClientsTalkToTheRightPaths: each client reaches its group's path with the verb and the
// encoding client-go's typed clients use, and decodes the answer with the package's scheme.
func TestClientsTalkToTheRightPaths(t *testing.T) {
	srv, c := serve(t)
	ctx := context.Background()

	list, err := c.Core.Pods(metav1.NamespaceAll).List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=node-a"})
	if err != nil || len(list.Items) != 1 || list.Items[0].Name != "web" {
		t.Fatalf("list pods: %v %v", list, err)
	}
	if got := srv.took(); len(got) != 1 || !strings.HasPrefix(got[0], "GET /api/v1/pods?fieldSelector=spec.nodeName%3Dnode-a") {
		t.Errorf("list pods asked %v", got)
	}

	pod, err := c.Core.Pods("default").Patch(ctx, "web", types.StrategicMergePatchType, []byte(`{"status":{}}`), metav1.PatchOptions{}, "status")
	if err != nil || pod.UID != "u1" {
		t.Fatalf("patch status: %v %v", pod, err)
	}
	if got := srv.took(); len(got) != 1 || got[0] != "PATCH /api/v1/namespaces/default/pods/web/status application/strategic-merge-patch+json" {
		t.Errorf("patch status asked %v", got)
	}

	tr, err := c.Core.ServiceAccounts("default").CreateToken(ctx, "builder", &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	if err != nil || tr.Status.Token != "t0k3n" {
		t.Fatalf("create token: %v %v", tr, err)
	}
	if got := srv.took(); len(got) != 1 || !strings.HasPrefix(got[0], "POST /api/v1/namespaces/default/serviceaccounts/builder/token ") {
		t.Errorf("create token asked %v", got)
	}

	_, _ = c.Leases.Leases(corev1.NamespaceNodeLease).Get(ctx, "node-a", metav1.GetOptions{}) // the path is what counts
	if got := srv.took(); len(got) != 1 || !strings.HasPrefix(got[0], "GET /apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/node-a") {
		t.Errorf("get lease asked %v", got)
	}

	ev := &corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: "web.1", Namespace: "default"}, Reason: "Started"}
	ev.APIVersion, ev.Kind = "v1", "Event"
	if _, err := c.Events.Create(ev); err != nil {
		t.Fatalf("create event: %v", err)
	}
	if got := srv.took(); len(got) != 1 || !strings.HasPrefix(got[0], "POST /api/v1/namespaces/default/events ") {
		t.Errorf("create event asked %v", got)
	}
}

// TestResourceVerbs: every verb of the typed clients makes the request client-go's typed
// clients make (the answers here are not of the kind asked: the requests are what counts).
func TestResourceVerbs(t *testing.T) {
	srv, c := serve(t)
	ctx := context.Background()
	secs := int64(30)
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-a"}}
	lease := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "node-a", Namespace: "kube-node-lease"}}
	for _, tc := range []struct {
		name string
		call func()
		want string // prefix of "METHOD path?query content-type"
	}{
		{"get node", func() { _, _ = c.Core.Nodes().Get(ctx, "node-a", metav1.GetOptions{ResourceVersion: "0"}) },
			"GET /api/v1/nodes/node-a?resourceVersion=0"},
		{"list nodes with a timeout", func() {
			_, _ = c.Core.Nodes().List(ctx, metav1.ListOptions{FieldSelector: "metadata.name=node-a", TimeoutSeconds: &secs})
		}, "GET /api/v1/nodes?fieldSelector=metadata.name%3Dnode-a&timeout=30s&timeoutSeconds=30"},
		{"watch secrets", func() {
			if w, err := c.Core.Secrets("ns1").Watch(ctx, metav1.ListOptions{ResourceVersion: "7"}); err == nil {
				w.Stop()
			}
		}, "GET /api/v1/namespaces/ns1/secrets?resourceVersion=7&watch=true"},
		{"create node", func() { _, _ = c.Core.Nodes().Create(ctx, node, metav1.CreateOptions{}) },
			"POST /api/v1/nodes application/json"},
		{"update lease", func() { _, _ = c.Leases.Leases("kube-node-lease").Update(ctx, lease, metav1.UpdateOptions{}) },
			"PUT /apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/node-a application/json"},
		{"delete pod", func() { _ = c.Core.Pods("default").Delete(ctx, "web", metav1.DeleteOptions{}) },
			"DELETE /api/v1/namespaces/default/pods/web application/json"},
		{"list runtime classes", func() { _, _ = c.RuntimeClasses.RuntimeClasses().List(ctx, metav1.ListOptions{}) },
			"GET /apis/node.k8s.io/v1/runtimeclasses"},
		{"token review", func() {
			_, _ = c.TokenReviews.Create(ctx, &authenticationv1.TokenReview{}, metav1.CreateOptions{})
		}, "POST /apis/authentication.k8s.io/v1/tokenreviews application/json"},
		{"create a certificate signing request", func() {
			_, _ = c.CSRs.Create(ctx, &certificatesv1.CertificateSigningRequest{}, metav1.CreateOptions{})
		}, "POST /apis/certificates.k8s.io/v1/certificatesigningrequests application/json"},
		{"watch one certificate signing request", func() {
			if w, err := c.CSRs.Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=csr-1"}); err == nil {
				w.Stop()
			}
		}, "GET /apis/certificates.k8s.io/v1/certificatesigningrequests?fieldSelector=metadata.name%3Dcsr-1&watch=true"},
	} {
		tc.call()
		if got := srv.took(); len(got) != 1 || !strings.HasPrefix(got[0], tc.want) {
			t.Errorf("%s asked %q, want %q", tc.name, got, tc.want)
		}
	}
}

// TestSchemeHasOnlyNodeletsGroups: the scheme knows the six groups and nothing else.
func TestSchemeHasOnlyNodeletsGroups(t *testing.T) {
	s := NewScheme()
	groups := map[string]bool{}
	for gvk := range s.AllKnownTypes() {
		groups[gvk.Group] = true
	}
	want := map[string]bool{"": true, "coordination.k8s.io": true, "node.k8s.io": true,
		"authentication.k8s.io": true, "authorization.k8s.io": true, "certificates.k8s.io": true}
	for g := range groups {
		if !want[g] {
			t.Errorf("scheme holds group %q", g)
		}
	}
	for g := range want {
		if !groups[g] {
			t.Errorf("scheme lacks group %q", g)
		}
	}
}
