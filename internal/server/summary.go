package server

import (
	"context"
	"encoding/json"
	"net/http"

	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
)

// SummaryProvider computes the node's stats summary (internal/stats).
type SummaryProvider interface {
	Summary(ctx context.Context) (*statsapi.Summary, error)
}

// summaryHandler serves GET /stats/summary as upstream: the statsapi.Summary as JSON. The
// only=cpu_memory parameter (upstream's updateStats=false shortcut) is accepted and answered
// with the full summary.
type summaryHandler struct{ summary SummaryProvider }

func (h *summaryHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s, err := h.summary.Summary(r.Context())
	if err != nil {
		httpError(w, r, http.StatusInternalServerError, "failed to get the stats summary: "+err.Error())
		return
	}
	data, err := json.Marshal(s)
	if err != nil {
		httpError(w, r, http.StatusInternalServerError, "failed to encode the stats summary: "+err.Error())
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(data)
}
