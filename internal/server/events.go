package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// eventsHandler serves GET /events[?namespace=NS][&pod=NAME]: the events recorded on the node
// (Deps.Events), those of namespace NS and/or of the pod NAME when given, sorted by
// lastTimestamp, as a v1 EventList (kind EventList, apiVersion v1, "items":[] when empty).
//
// The kubelet has no such route: its events go to the API server, where `kubectl get events`
// reads them. Like /containerLogs it is served only on a loopback address, because event
// messages can carry container output (a failed exec probe's output, a termination message).
type eventsHandler struct {
	events EventLister
}

func (h *eventsHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	query := r.URL.Query()
	data, err := encodeEvents(h.events.List(query.Get("namespace"), query.Get("pod")))
	if err != nil {
		httpError(w, r, http.StatusInternalServerError, err.Error())
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(data)
}

// encodeEvents encodes events as encodePods encodes pods: one line of JSON and a newline.
func encodeEvents(events []v1.Event) ([]byte, error) {
	list := v1.EventList{
		TypeMeta: metav1.TypeMeta{Kind: "EventList", APIVersion: "v1"},
		Items:    events,
	}
	if list.Items == nil {
		list.Items = []v1.Event{}
	}
	var buf bytes.Buffer
	if err := json.NewEncoder(&buf).Encode(&list); err != nil {
		return nil, fmt.Errorf("encode event list: %w", err)
	}
	return buf.Bytes(), nil
}
