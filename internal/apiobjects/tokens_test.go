package apiobjects

import (
	"errors"
	"fmt"
	"github.com/nodelet/nodelet/internal/fakekube"
	"strings"
	"sync"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	testingclock "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// tokenAPI answers TokenRequests as the API server does: token "tok-<n>" valid for the
// requested lifetime from now. It records the requests.
type tokenAPI struct {
	clock *testingclock.FakeClock

	mu       sync.Mutex
	requests []tokenCall
	fail     error
}

type tokenCall struct {
	serviceAccount, namespace string
	req                       *authenticationv1.TokenRequest
}

func (a *tokenAPI) react(action k8stesting.Action) (bool, runtime.Object, error) {
	create := action.(k8stesting.CreateAction)
	if create.GetSubresource() != "token" {
		return false, nil, nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	req := create.GetObject().(*authenticationv1.TokenRequest).DeepCopy()
	a.requests = append(a.requests, tokenCall{action.(k8stesting.CreateActionImpl).Name, create.GetNamespace(), req})
	if a.fail != nil {
		return true, nil, a.fail
	}
	resp := req.DeepCopy()
	resp.Status = authenticationv1.TokenRequestStatus{Token: fmt.Sprintf("tok-%d", len(a.requests)),
		ExpirationTimestamp: metav1.NewTime(a.clock.Now().Add(time.Duration(*req.Spec.ExpirationSeconds) * time.Second))}
	return true, resp, nil
}

func (a *tokenAPI) count() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.requests)
}

func (a *tokenAPI) failWith(err error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.fail = err
}

func newTokenManager(t *testing.T) (*Manager, *tokenAPI, *testingclock.FakeClock) {
	t.Helper()
	clk := testingclock.NewFakeClock(t0)
	api := &tokenAPI{clock: clk}
	client := fake.NewClientset()
	client.PrependReactor("create", "serviceaccounts", api.react)
	m, err := New(Config{Client: fakekube.Core(client), Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	m.jitter = func() time.Duration { return 0 }
	return m, api, clk
}

func projection(audience string, exp *int64) *v1.ServiceAccountTokenProjection {
	return &v1.ServiceAccountTokenProjection{Audience: audience, ExpirationSeconds: exp, Path: "token"}
}

func mustToken(t *testing.T, m *Manager, pod *v1.Pod, p *v1.ServiceAccountTokenProjection) string {
	t.Helper()
	tok, err := m.GetServiceAccountToken(pod, p)
	if err != nil {
		t.Fatalf("GetServiceAccountToken: %v", err)
	}
	return tok
}

func TestTokenRequestFields(t *testing.T) {
	for _, tc := range []struct {
		name          string
		p             *v1.ServiceAccountTokenProjection
		wantAudiences []string
		wantExp       int64
	}{
		{"defaults: API server's audience, 3600 s", projection("", nil), nil, 3600},
		{"audience and lifetime", projection("vault", ptr.To[int64](7200)), []string{"vault"}, 7200},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, api, _ := newTokenManager(t)
			pod := podUsing("p1", nil, nil)
			pod.Spec.ServiceAccountName = "builder"
			if tok := mustToken(t, m, pod, tc.p); tok != "tok-1" {
				t.Errorf("token %q", tok)
			}
			call := api.requests[0]
			spec := call.req.Spec
			if call.serviceAccount != "builder" || call.namespace != ns {
				t.Errorf("requested for %s/%s, want %s/builder", call.namespace, call.serviceAccount, ns)
			}
			if fmt.Sprint(spec.Audiences) != fmt.Sprint(tc.wantAudiences) || spec.ExpirationSeconds == nil || *spec.ExpirationSeconds != tc.wantExp {
				t.Errorf("audiences %v, expiration %v; want %v, %d", spec.Audiences, spec.ExpirationSeconds, tc.wantAudiences, tc.wantExp)
			}
			want := authenticationv1.BoundObjectReference{Kind: "Pod", APIVersion: "v1", Name: pod.Name, UID: pod.UID}
			if spec.BoundObjectRef == nil || *spec.BoundObjectRef != want {
				t.Errorf("bound to %v, want %v", spec.BoundObjectRef, want)
			}
		})
	}
}

func TestTokenCacheAndRefresh(t *testing.T) {
	m, api, clk := newTokenManager(t)
	pod := podUsing("p1", nil, nil)
	p := projection("", nil) // 1 hour: refreshed after 48 minutes
	first := mustToken(t, m, pod, p)
	clk.Step(47 * time.Minute)
	if tok := mustToken(t, m, pod, p); tok != first || api.count() != 1 {
		t.Errorf("after 47 min: token %q after %d requests, want the cached %q", tok, api.count(), first)
	}
	if tok := mustToken(t, m, pod, projection("other", nil)); tok == first || api.count() != 2 {
		t.Errorf("another audience: token %q after %d requests, want a new one", tok, api.count())
	}
	other := podUsing("p2", nil, nil)
	if tok := mustToken(t, m, other, p); tok == first || api.count() != 3 {
		t.Errorf("another pod: token %q after %d requests, want a new one", tok, api.count())
	}
	clk.Step(2 * time.Minute)
	refreshed := mustToken(t, m, pod, p)
	if refreshed == first || api.count() != 4 {
		t.Errorf("after 49 min: token %q after %d requests, want a refresh", refreshed, api.count())
	}
	if tok := mustToken(t, m, pod, p); tok != refreshed {
		t.Errorf("the refreshed token is not cached: %q", tok)
	}
}

func TestTokenRefreshFailure(t *testing.T) {
	m, api, clk := newTokenManager(t)
	pod := podUsing("p1", nil, nil)
	p := projection("", nil)
	api.failWith(errors.New("connection refused"))
	if _, err := m.GetServiceAccountToken(pod, p); err == nil || !strings.Contains(err.Error(), "failed to fetch token of service account ns/default for pod ns/pod-p1") {
		t.Errorf("no token yet: %v, want an error naming the service account and pod", err)
	}
	api.failWith(nil)
	first := mustToken(t, m, pod, p)
	api.failWith(errors.New("connection refused"))
	clk.Step(50 * time.Minute) // due for a refresh, still valid
	if tok := mustToken(t, m, pod, p); tok != first {
		t.Errorf("refresh failed while valid: %q, want the cached %q", tok, first)
	}
	clk.Step(11 * time.Minute) // expired
	if _, err := m.GetServiceAccountToken(pod, p); err == nil || !strings.Contains(err.Error(), "expired and refresh failed") {
		t.Errorf("refresh failed after expiry: %v", err)
	}
}

func TestTokensDroppedWithThePodAndWhenExpired(t *testing.T) {
	m, api, clk := newTokenManager(t)
	p1, p2 := podUsing("p1", nil, nil), podUsing("p2", nil, nil)
	short := projection("", ptr.To[int64](600))
	mustToken(t, m, p1, projection("", nil))
	mustToken(t, m, p2, projection("", nil))
	mustToken(t, m, p2, short)
	m.RegisterPod(p1)
	m.UnregisterPod(p1)
	if n := len(m.tokens); n != 2 {
		t.Errorf("%d tokens after p1 left, want p2's 2", n)
	}
	clk.Step(11 * time.Minute)
	m.dropExpiredTokens()
	if n := len(m.tokens); n != 1 {
		t.Errorf("%d tokens after the 10-minute one expired, want 1", n)
	}
	mustToken(t, m, p1, projection("", nil))
	if n := api.count(); n != 4 {
		t.Errorf("%d requests, want a new one for p1", n)
	}
}

func TestTokenNeedsServiceAccount(t *testing.T) {
	m, api, _ := newTokenManager(t)
	pod := podUsing("p1", nil, nil)
	pod.Spec.ServiceAccountName = ""
	if _, err := m.GetServiceAccountToken(pod, projection("", nil)); err == nil || !strings.Contains(err.Error(), "ns/pod-p1 has no serviceAccountName") {
		t.Errorf("error %v", err)
	}
	if api.count() != 0 {
		t.Error("requested a token without a service account")
	}
}

func TestRequiresRefresh(t *testing.T) {
	token := func(issued time.Time, lifetime time.Duration) *authenticationv1.TokenRequest {
		return &authenticationv1.TokenRequest{
			Spec:   authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To(int64(lifetime / time.Second))},
			Status: authenticationv1.TokenRequestStatus{ExpirationTimestamp: metav1.NewTime(issued.Add(lifetime))},
		}
	}
	for _, tc := range []struct {
		name   string
		tr     *authenticationv1.TokenRequest
		now    time.Duration // since t0
		jitter time.Duration
		want   bool
	}{
		{"fresh", token(t0, time.Hour), 0, 0, false},
		{"at 80%", token(t0, time.Hour), 48 * time.Minute, 0, false},
		{"past 80%", token(t0, time.Hour), 48*time.Minute + time.Second, 0, true},
		{"jitter moves it earlier", token(t0, time.Hour), 47*time.Minute + 51*time.Second, 10 * time.Second, true},
		{"long-lived: 24 hours", token(t0, 48*time.Hour), 24*time.Hour + time.Second, 0, true},
		{"long-lived: under 24 hours", token(t0, 48*time.Hour), 23 * time.Hour, 0, false},
		{"no expirationSeconds: never", &authenticationv1.TokenRequest{}, 100 * time.Hour, 0, false},
	} {
		if got := requiresRefresh(t0.Add(tc.now), tc.tr, tc.jitter); got != tc.want {
			t.Errorf("%s: requiresRefresh = %t, want %t", tc.name, got, tc.want)
		}
	}
}

func TestTokenKey(t *testing.T) {
	base := tokenRequest(podUsing("p1", nil, nil), projection("a", nil))
	key := tokenKey("sa", ns, base)
	for name, other := range map[string]string{
		"service account": tokenKey("other", ns, base),
		"namespace":       tokenKey("sa", "other", base),
		"audience":        tokenKey("sa", ns, tokenRequest(podUsing("p1", nil, nil), projection("b", nil))),
		"expiration":      tokenKey("sa", ns, tokenRequest(podUsing("p1", nil, nil), projection("a", ptr.To[int64](7200)))),
		"pod":             tokenKey("sa", ns, tokenRequest(podUsing("p2", nil, nil), projection("a", nil))),
	} {
		if other == key {
			t.Errorf("another %s has the same key %s", name, key)
		}
	}
	if again := tokenKey("sa", ns, tokenRequest(podUsing("p1", nil, nil), projection("a", ptr.To[int64](3600)))); again != key {
		t.Errorf("the default lifetime spelled out: key %s, want %s", again, key)
	}
}
