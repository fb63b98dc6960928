package server

import (
	"bytes"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"k8s.io/klog/v2"
)

// healthzHandler serves GET /healthz and GET /healthz/{name} in the format of
// k8s.io/apiserver/pkg/server/healthz, which the kubelet uses, except that a failure's reason
// is shown: this port is local.
type healthzHandler struct {
	checks []HealthCheck
}

// all runs every check not excluded with ?exclude=name (repeatable).
func (h *healthzHandler) all(w http.ResponseWriter, r *http.Request) {
	query := r.URL.Query()
	excluded := map[string]bool{}
	for _, name := range query["exclude"] {
		excluded[name] = true
	}
	var out bytes.Buffer
	var failed []string
	for _, c := range h.checks {
		name := c.Name()
		if excluded[name] {
			delete(excluded, name)
			fmt.Fprintf(&out, "[+]%s excluded: ok\n", name)
			continue
		}
		if err := c.Check(); err != nil {
			fmt.Fprintf(&out, "[-]%s failed: %v\n", name, err)
			failed = append(failed, name)
			continue
		}
		fmt.Fprintf(&out, "[+]%s ok\n", name)
	}
	if len(excluded) > 0 {
		names := make([]string, 0, len(excluded))
		for name := range excluded {
			names = append(names, strconv.Quote(name))
		}
		slices.Sort(names)
		fmt.Fprintf(&out, "warn: some health checks cannot be excluded: no matches for %s\n", strings.Join(names, ","))
	}
	if len(failed) > 0 {
		klog.FromContext(r.Context()).V(2).Info("Health check failed", "failed", failed, "output", out.String())
		http.Error(w, out.String()+"healthz check failed", http.StatusInternalServerError)
		return
	}
	setPlainText(w)
	if _, verbose := query["verbose"]; !verbose {
		_, _ = fmt.Fprint(w, "ok")
		return
	}
	_, _ = out.WriteTo(w)
	_, _ = fmt.Fprint(w, "healthz check passed\n")
}

// one runs the check named in the path.
func (h *healthzHandler) one(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	i := slices.IndexFunc(h.checks, func(c HealthCheck) bool { return c.Name() == name })
	if i < 0 {
		httpError(w, r, http.StatusNotFound, fmt.Sprintf("health check %q not found", name))
		return
	}
	if err := h.checks[i].Check(); err != nil {
		klog.FromContext(r.Context()).V(2).Info("Health check failed", "check", name, "err", err)
		http.Error(w, fmt.Sprintf("internal server error: %v", err), http.StatusInternalServerError)
		return
	}
	setPlainText(w)
	_, _ = fmt.Fprint(w, "ok")
}

func setPlainText(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
}
