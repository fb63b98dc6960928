package cli

import (
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestPodCreated(t *testing.T) {
	created, started := time.Unix(100, 0), time.Unix(200, 0)
	cases := []struct {
		name string
		pod  v1.Pod
		want time.Time
	}{
		{"API pod: creationTimestamp", v1.Pod{ObjectMeta: metav1.ObjectMeta{CreationTimestamp: metav1.NewTime(created)},
			Status: v1.PodStatus{StartTime: &metav1.Time{Time: started}}}, created},
		{"static pod: startTime", v1.Pod{Status: v1.PodStatus{StartTime: &metav1.Time{Time: started}}}, started},
		{"not synced yet: unknown", v1.Pod{}, time.Time{}},
	}
	for _, tc := range cases {
		if got := podCreated(&tc.pod); !got.Equal(tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}
