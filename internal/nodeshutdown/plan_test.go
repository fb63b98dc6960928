package nodeshutdown

import (
	"slices"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestPeriods: upstream's Test_migrateConfig cases, and the bands by priority sorted.
func TestPeriods(t *testing.T) {
	for _, tc := range []struct {
		name            string
		grace, critical time.Duration
		byPriority      []Period
		want            []Period
	}{
		{name: "shutdownGracePeriod and shutdownGracePeriodCriticalPods", grace: 300 * time.Second, critical: 120 * time.Second,
			want: []Period{{DefaultPriority, 180}, {SystemCriticalPriority, 120}}},
		{name: "shutdownGracePeriod alone", grace: 100 * time.Second,
			want: []Period{{DefaultPriority, 100}, {SystemCriticalPriority, 0}}},
		{name: "nothing set: off"},
		{name: "critical pods' period above the whole: off", grace: time.Second, critical: 100 * time.Second},
		{name: "by priority, sorted", grace: 300 * time.Second, byPriority: []Period{{100000, 5}, {0, 30}, {2000000000, 10}},
			want: []Period{{0, 30}, {100000, 5}, {2000000000, 10}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Periods(tc.grace, tc.critical, tc.byPriority); !slices.Equal(got, tc.want) {
				t.Errorf("Periods = %v, want %v", got, tc.want)
			}
		})
	}
	if got := Budget([]Period{{0, 30}, {100000, 5}, {2000000000, 10}}); got != 45*time.Second {
		t.Errorf("Budget = %v, want 45s", got)
	}
}

func pod(name string, priority int32, grace *int64) *v1.Pod {
	return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: v1.PodSpec{Priority: &priority, TerminationGracePeriodSeconds: grace}}
}

func names(pods []*v1.Pod) []string {
	var out []string
	for _, p := range pods {
		out = append(out, p.Name)
	}
	return out
}

// TestGroups: upstream's Test_groupByPriority cases: each pod in the band at or below its
// priority, below every band in the lowest, above every band in the highest.
func TestGroups(t *testing.T) {
	noPriority := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "no-priority"}}
	for _, tc := range []struct {
		name    string
		periods []Period
		pods    []*v1.Pod
		want    [][]string
	}{
		{name: "the two default bands", periods: Periods(300*time.Second, 120*time.Second, nil),
			pods: []*v1.Pod{pod("normal-pod", 0, nil), pod("highest-user-definable-pod", 1000000000, nil), pod("critical-pod", SystemCriticalPriority, nil), noPriority},
			want: [][]string{{"normal-pod", "highest-user-definable-pod", "no-priority"}, {"critical-pod"}}},
		{name: "by priority", periods: []Period{{1, 10}, {2, 20}, {3, 30}, {4, 40}},
			pods: []*v1.Pod{pod("pod-0", 0, nil), pod("pod-1", 1, nil), pod("pod-2", 2, nil), pod("pod-3", 3, nil), pod("pod-4", 4, nil), pod("pod-5", 5, nil)},
			want: [][]string{{"pod-0", "pod-1"}, {"pod-2"}, {"pod-3"}, {"pod-4", "pod-5"}}},
		{name: "between bands: the lower one; empty bands kept", periods: []Period{{0, 10}, {100, 20}, {1000, 30}},
			pods: []*v1.Pod{pod("p50", 50, nil), pod("p999", 999, nil)},
			want: [][]string{{"p50"}, {"p999"}, nil}},
		{name: "no band: no group", pods: []*v1.Pod{pod("p", 0, nil)}, want: [][]string{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			groups := Groups(tc.periods, tc.pods)
			got := [][]string{}
			for i, g := range groups {
				if g.Period != tc.periods[i] {
					t.Errorf("group %d is band %v, want %v", i, g.Period, tc.periods[i])
				}
				got = append(got, names(g.Pods))
			}
			if !slices.EqualFunc(got, tc.want, slices.Equal[[]string]) {
				t.Errorf("Groups = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestGracePeriod(t *testing.T) {
	g := Group{Period: Period{0, 30}}
	five, sixty := int64(5), int64(60)
	for _, tc := range []struct {
		name string
		pod  *v1.Pod
		want int64
	}{
		{"the pod's own, when shorter", pod("p", 0, &five), 5},
		{"the band's, when the pod's is longer", pod("p", 0, &sixty), 30},
		{"the band's, without the pod's", pod("p", 0, nil), 30},
	} {
		if got := GracePeriod(g, tc.pod); got != tc.want {
			t.Errorf("%s: GracePeriod = %d, want %d", tc.name, got, tc.want)
		}
	}
}
