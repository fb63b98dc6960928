package imagegc

import (
	"slices"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/sets"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

var t0 = time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)

func ids(cs []Candidate) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.ID)
	}
	return out
}

func TestDetect(t *testing.T) {
	old := map[string]Record{"a": {FirstDetected: t0, LastUsed: t0}, "gone": {FirstDetected: t0}}
	now := t0.Add(time.Hour)
	got := Detect(old, []*runtimeapi.Image{{Id: "a", Size: 10}, {Id: "b", Size: 20, Pinned: true}, {Id: "c", Size: 30}}, sets.New("c"), now)
	want := map[string]Record{
		"a": {FirstDetected: t0, LastUsed: t0, Size: 10},   // known, not in use: last use kept
		"b": {FirstDetected: now, Size: 20, Pinned: true},  // new
		"c": {FirstDetected: now, LastUsed: now, Size: 30}, // new and in use
	}
	if len(got) != len(want) {
		t.Fatalf("Detect = %v, want %v (images gone are forgotten)", got, want)
	}
	for id, w := range want {
		if got[id] != w {
			t.Errorf("%s: %+v, want %+v", id, got[id], w)
		}
	}
	if _, ok := old["b"]; ok {
		t.Error("Detect modified its input")
	}
}

func TestEvictionOrder(t *testing.T) {
	records := map[string]Record{
		"used":         {FirstDetected: t0, LastUsed: t0.Add(3 * time.Hour)},
		"pinned":       {FirstDetected: t0, Pinned: true},
		"recent":       {FirstDetected: t0, LastUsed: t0.Add(2 * time.Hour)},
		"old":          {FirstDetected: t0, LastUsed: t0.Add(time.Hour)},
		"never-later":  {FirstDetected: t0.Add(time.Minute)},
		"never-before": {FirstDetected: t0},
	}
	got := ids(EvictionOrder(records, sets.New("used")))
	want := []string{"never-before", "never-later", "old", "recent"}
	if !slices.Equal(got, want) {
		t.Errorf("EvictionOrder = %v, want %v (in use and pinned left out, least recently used first)", got, want)
	}
}

func TestOldImages(t *testing.T) {
	order := []Candidate{{ID: "never", Record: Record{FirstDetected: t0}},
		{ID: "old", Record: Record{LastUsed: t0.Add(time.Hour)}}, {ID: "fresh", Record: Record{LastUsed: t0.Add(2 * time.Hour)}}}
	now := t0.Add(2*time.Hour + 30*time.Minute)
	for _, tc := range []struct {
		name       string
		began      time.Time
		maxAge     time.Duration
		remove     []string
		keepLength int
	}{
		{"no maximum age", t0, 0, nil, 3},
		{"nodelet has not run that long yet", now.Add(-30 * time.Minute), time.Hour, nil, 3},
		{"unused for longer than the age", t0, time.Hour, []string{"never", "old"}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			remove, keep := OldImages(order, now, tc.began, tc.maxAge)
			if !slices.Equal(ids(remove), tc.remove) || len(keep) != tc.keepLength {
				t.Errorf("remove %v keep %v", ids(remove), ids(keep))
			}
		})
	}
}

func TestFreeSpace(t *testing.T) {
	now := t0.Add(time.Hour)
	order := []Candidate{
		{ID: "young", Record: Record{FirstDetected: now.Add(-time.Minute), Size: 100}},
		{ID: "a", Record: Record{FirstDetected: t0, Size: 40}},
		{ID: "b", Record: Record{FirstDetected: t0, Size: 40}},
		{ID: "c", Record: Record{FirstDetected: t0, Size: 40}},
		{ID: "just-used", Record: Record{FirstDetected: t0, LastUsed: now, Size: 40}},
	}
	for _, tc := range []struct {
		toFree int64
		want   []string
	}{
		{0, nil},
		{40, []string{"a"}},
		{41, []string{"a", "b"}},
		{1000, []string{"a", "b", "c"}}, // not enough: every eligible image
	} {
		if got := ids(FreeSpace(order, tc.toFree, now, 2*time.Minute)); !slices.Equal(got, tc.want) {
			t.Errorf("FreeSpace(%d) = %v, want %v (younger than imageMinimumGCAge and used now are spared)", tc.toFree, got, tc.want)
		}
	}
}

func TestUsage(t *testing.T) {
	for _, tc := range []struct {
		capacity, available int64
		high, low           int
		percent             int
		toFree              int64
	}{
		{1000, 200, 85, 80, 80, 0},  // under the high threshold
		{1000, 150, 85, 80, 85, 50}, // at it: down to 80% used, 200 available
		{1000, 1200, 85, 80, 0, 0},  // available over capacity counts as capacity
		{1000, 0, 100, 100, 100, 0}, // full, low 100%: nothing to free
		{1000, 100, 1, 0, 90, 900},  // everything
	} {
		p, f := Usage(tc.capacity, tc.available, tc.high, tc.low)
		if p != tc.percent || f != tc.toFree {
			t.Errorf("Usage(%d, %d, %d, %d) = %d%%, %d; want %d%%, %d", tc.capacity, tc.available, tc.high, tc.low, p, f, tc.percent, tc.toFree)
		}
	}
}

func TestPolicyValidate(t *testing.T) {
	for _, tc := range []struct {
		p    Policy
		want string
	}{
		{Policy{HighThresholdPercent: 85, LowThresholdPercent: 80, MinAge: 2 * time.Minute}, ""},
		{Policy{HighThresholdPercent: 101, LowThresholdPercent: 80}, "invalid HighThresholdPercent 101, must be in range [0-100]"},
		{Policy{HighThresholdPercent: 85, LowThresholdPercent: -1}, "invalid LowThresholdPercent -1, must be in range [0-100]"},
		{Policy{HighThresholdPercent: 80, LowThresholdPercent: 85}, "LowThresholdPercent 85 can not be higher than HighThresholdPercent 80"},
		{Policy{HighThresholdPercent: 85, LowThresholdPercent: 80, MinAge: time.Hour, MaxAge: time.Minute}, "imageMaximumGCAge 1m0s must be greater than imageMinimumGCAge 1h0m0s"},
	} {
		err := tc.p.Validate()
		if (err == nil) != (tc.want == "") || (err != nil && err.Error() != tc.want) {
			t.Errorf("Validate(%+v) = %v, want %q", tc.p, err, tc.want)
		}
	}
}
