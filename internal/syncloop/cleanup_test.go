package syncloop

import (
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/nodelet/nodelet/internal/podworkers"
)

func uids(s ...types.UID) []types.UID { return s }

func TestDecideCleanup(t *testing.T) {
	workers := map[types.UID]podworkers.WorkType{
		"syncing": podworkers.SyncPod, "stopping": podworkers.TerminatingPod, "stopped": podworkers.TerminatedPod,
	}
	tests := []struct {
		name                 string
		in                   cleanupInput
		remove, dirs, forget string
		keep                 string
	}{{
		name: "nothing anywhere",
		in:   cleanupInput{},
		keep: "[]",
	}, {
		name: "desired pods keep everything, whatever their worker says",
		in: cleanupInput{Desired: sets.New[types.UID]("syncing", "stopped"), Workers: workers,
			Runtime: uids("syncing", "stopped"), Dirs: uids("syncing", "stopped"), Statuses: uids("syncing", "stopped")},
		keep: "[stopped stopping syncing]",
	}, {
		name:   "a pod no source wants is removed from the runtime once its worker has terminated it, not before",
		in:     cleanupInput{Workers: workers, Runtime: uids("syncing", "stopping", "stopped")},
		remove: "[stopped]",
		keep:   "[stopped stopping syncing]",
	}, {
		name:   "a runtime pod no worker knows (left by an earlier run, made by hand) is removed",
		in:     cleanupInput{Runtime: uids("stranger")},
		remove: "[stranger]",
		keep:   "[stranger]",
	}, {
		name:   "a directory goes with its runtime pod, not on its own",
		in:     cleanupInput{Runtime: uids("stranger"), Dirs: uids("stranger"), Statuses: uids("stranger")},
		remove: "[stranger]",
		keep:   "[stranger]",
	}, {
		name: "a directory of a pod gone from the runtime is torn down unless a worker may still use it",
		in:   cleanupInput{Workers: workers, Dirs: uids("orphan", "syncing", "stopping", "stopped")},
		dirs: "[orphan stopped]",
		keep: "[stopped stopping syncing]",
	}, {
		name:   "a status left when the runtime pod and the directory went is forgotten",
		in:     cleanupInput{Workers: workers, Dirs: uids("dir"), Statuses: uids("dir", "left", "syncing", "stopped")},
		dirs:   "[dir]",
		forget: "[left stopped]",
		keep:   "[stopped stopping syncing]",
	}, {
		name: "pods whose removal is in flight are left to it",
		in: cleanupInput{InFlight: sets.New[types.UID]("a", "b", "c"),
			Runtime: uids("a"), Dirs: uids("b"), Statuses: uids("c")},
		keep: "[a b c]",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := decideCleanup(tt.in)
			str := func(u []types.UID) string {
				if len(u) == 0 {
					return ""
				}
				return fmt.Sprint(u)
			}
			if got := str(p.RemovePods); got != tt.remove {
				t.Errorf("remove pods %s, want %s", got, tt.remove)
			}
			if got := str(p.TearDownDirs); got != tt.dirs {
				t.Errorf("tear down dirs %s, want %s", got, tt.dirs)
			}
			if got := str(p.ForgetStatuses); got != tt.forget {
				t.Errorf("forget statuses %s, want %s", got, tt.forget)
			}
			if got := fmt.Sprint(sets.List(p.KeepAllocations)); got != tt.keep {
				t.Errorf("keep allocations %s, want %s", got, tt.keep)
			}
		})
	}
}
