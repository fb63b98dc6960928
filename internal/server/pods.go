package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// podsHandler serves GET /pods: the desired pods and their latest status as a v1 PodList, as
// the kubelet's read-only port does (server.go getPods/encodePods).
type podsHandler struct {
	pods PodSource
}

func (h *podsHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	writePods(w, r, h.pods.Pods())
}

// writePods answers with pods as a PodList (encodePods).
func writePods(w http.ResponseWriter, r *http.Request, pods []*v1.Pod) {
	data, err := encodePods(pods)
	if err != nil {
		httpError(w, r, http.StatusInternalServerError, err.Error())
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(data)
}

// encodePods encodes pods as the kubelet's legacy v1 codec does: a PodList with kind and
// apiVersion, an empty metadata object, one line of JSON and a final newline.
func encodePods(pods []*v1.Pod) ([]byte, error) {
	list := v1.PodList{
		TypeMeta: metav1.TypeMeta{Kind: "PodList", APIVersion: "v1"},
		Items:    make([]v1.Pod, 0, len(pods)),
	}
	for _, p := range pods {
		if p != nil {
			list.Items = append(list.Items, *p)
		}
	}
	var buf bytes.Buffer
	if err := json.NewEncoder(&buf).Encode(&list); err != nil {
		return nil, fmt.Errorf("encode pod list: %w", err)
	}
	return buf.Bytes(), nil
}
