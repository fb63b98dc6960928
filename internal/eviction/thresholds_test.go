package eviction

import (
	"strings"
	"testing"
	"time"
)

func TestParse(t *testing.T) {
	tests := []struct {
		name    string
		in      Settings
		want    []string // Threshold.String() of each result, in order
		wantErr string
	}{
		{name: "upstream defaults", in: Settings{Hard: DefaultEvictionHard()},
			want: []string{"imagefs.available<15% (hard)", "imagefs.inodesFree<5% (hard)", "memory.available<100Mi (hard)",
				"nodefs.available<10% (hard)", "nodefs.inodesFree<5% (hard)"}},
		{name: "0% and 100% are ignored", in: Settings{Hard: map[string]string{"memory.available": "0%", "nodefs.available": "100%"}}},
		{name: "soft with grace period", in: Settings{Soft: map[string]string{"memory.available": "1Gi"}, SoftGracePeriod: map[string]string{"memory.available": "1m30s"}},
			want: []string{"memory.available<1Gi (soft, grace period 1m30s)"}},
		{name: "allocatable threshold with enforceNodeAllocatable pods",
			in:   Settings{Hard: map[string]string{"memory.available": "100Mi"}, EnforceNodeAllocatable: []string{"pods"}},
			want: []string{"memory.available<100Mi (hard)", "allocatableMemory.available<100Mi (hard)"}},
		{name: "pid and quantities of inodes", in: Settings{Hard: map[string]string{"pid.available": "100", "nodefs.inodesFree": "1k"}},
			want: []string{"nodefs.inodesFree<1k (hard)", "pid.available<100 (hard)"}},
		{name: "unknown signal", in: Settings{Hard: map[string]string{"memory.free": "1Gi"}}, wantErr: `evictionHard: unsupported eviction signal "memory.free"`},
		{name: "negative quantity", in: Settings{Hard: map[string]string{"memory.available": "-1Gi"}}, wantErr: "evictionHard[memory.available]: eviction threshold must be positive: -1Gi"},
		{name: "zero quantity", in: Settings{Soft: map[string]string{"memory.available": "0"}}, wantErr: "evictionSoft[memory.available]: eviction threshold must be positive"},
		{name: "over 100%", in: Settings{Hard: map[string]string{"nodefs.available": "150%"}}, wantErr: "evictionHard[nodefs.available]: eviction percentage threshold must be <= 100%: 150%"},
		{name: "negative percentage", in: Settings{Hard: map[string]string{"nodefs.available": "-5%"}}, wantErr: "must be >= 0%"},
		{name: "not a number", in: Settings{Hard: map[string]string{"nodefs.available": "x%"}}, wantErr: `evictionHard[nodefs.available]: "x%" is not a percentage`},
		{name: "soft without grace period", in: Settings{Soft: map[string]string{"memory.available": "1Gi"}}, wantErr: "evictionSoftGracePeriod: grace period must be specified for the soft eviction threshold memory.available"},
		{name: "negative grace period", in: Settings{Soft: map[string]string{"memory.available": "1Gi"}, SoftGracePeriod: map[string]string{"memory.available": "-1s"}}, wantErr: "must be a positive value"},
		{name: "grace period of unknown signal", in: Settings{SoftGracePeriod: map[string]string{"mem": "1s"}}, wantErr: `evictionSoftGracePeriod: unsupported eviction signal "mem"`},
		{name: "negative minimum reclaim", in: Settings{MinimumReclaim: map[string]string{"nodefs.available": "-1Gi"}}, wantErr: "evictionMinimumReclaim[nodefs.available]: negative eviction minimum reclaim -1Gi"},
		{name: "zero percent minimum reclaim", in: Settings{MinimumReclaim: map[string]string{"nodefs.available": "0%"}}, wantErr: "must be positive"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse(tt.in)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var s []string
			for _, th := range got {
				s = append(s, th.String())
			}
			if strings.Join(s, ", ") != strings.Join(tt.want, ", ") {
				t.Errorf("Parse = %q, want %q", s, tt.want)
			}
		})
	}
}

func TestParseMinimumReclaimAttached(t *testing.T) {
	got, err := Parse(Settings{Hard: map[string]string{"nodefs.available": "10%"}, MinimumReclaim: map[string]string{"nodefs.available": "1Gi"}})
	if err != nil || len(got) != 1 || got[0].MinReclaim == nil || got[0].MinReclaim.String() != "1Gi" {
		t.Fatalf("Parse = %+v, %v", got, err)
	}
	if got[0].GracePeriod != 0 || !got[0].Hard() {
		t.Errorf("hard threshold has grace period %v", got[0].GracePeriod)
	}
	soft, _ := Parse(Settings{Soft: map[string]string{"nodefs.available": "10%"}, SoftGracePeriod: map[string]string{"nodefs.available": "0s"}})
	if soft[0].Hard() || soft[0].GracePeriod > time.Millisecond {
		t.Errorf("a soft threshold with a 0s grace period must stay soft: %v", soft[0])
	}
}

func TestWithContainerFs(t *testing.T) {
	hard, _ := Parse(Settings{Hard: map[string]string{"nodefs.available": "10%", "imagefs.available": "15%", "containerfs.available": "1%"}})
	str := func(ts []Threshold) string {
		var s []string
		for _, t := range ts {
			s = append(s, t.String())
		}
		return strings.Join(s, ", ")
	}
	if got, want := str(WithContainerFs(hard, false)), "imagefs.available<15% (hard), nodefs.available<10% (hard), containerfs.available<10% (hard)"; got != want {
		t.Errorf("single filesystem: %s, want %s", got, want)
	}
	if got, want := str(WithContainerFs(hard, true)), "imagefs.available<15% (hard), nodefs.available<10% (hard), containerfs.available<15% (hard)"; got != want {
		t.Errorf("dedicated image filesystem: %s, want %s", got, want)
	}
}
