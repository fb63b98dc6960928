package checkpoint

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
	clocktesting "k8s.io/utils/clock/testing"
)

var start = metav1.NewTime(time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC))

func sample() Data {
	return Data{Pods: []Pod{
		{UID: "b", Namespace: "default", Name: "web", StartTime: start,
			BackOffs: []BackOff{{Key: "web_default_b_main_1", Delay: metav1.Duration{Duration: 40 * time.Second}}}},
		{UID: "a", Namespace: "kube-system", Name: "dns", StartTime: start},
	}}
}

func TestEncodeDecode(t *testing.T) {
	b, err := Encode(sample())
	if err != nil {
		t.Fatal(err)
	}
	got, err := Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	if !sameData(t, got, sample()) {
		t.Errorf("Decode(Encode(d)) = %+v, want %+v", got, sample())
	}
	// Sorted: the same state is the same bytes, whatever the order it was collected in.
	d := sample()
	d.Pods[0], d.Pods[1] = d.Pods[1], d.Pods[0]
	if b2, _ := Encode(d); string(b2) != string(b) {
		t.Errorf("Encode depends on the order of the pods:\n%s\n%s", b, b2)
	}
}

func TestDecodeRefusesBadFiles(t *testing.T) {
	good, err := Encode(sample())
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		b    string
		want string
	}{
		{"empty", "", "not a checkpoint"},
		{"truncated", string(good[:len(good)/2]), "not a checkpoint"},
		{"garbage", "\x00\x01garbage", "not a checkpoint"},
		{"other version", strings.Replace(string(good), `"version":1`, `"version":2`, 1), "version 2"},
		{"data changed", strings.Replace(string(good), `"web"`, `"wex"`, 1), "checksum"},
		{"unknown field", strings.Replace(string(good), `{"version"`, `{"extra":1,"version"`, 1), "not a checkpoint"},
	}
	for _, tt := range tests {
		if _, err := Decode([]byte(tt.b)); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: Decode error %v, want one containing %q", tt.name, err, tt.want)
		}
	}
}

func TestSaveLoad(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "checkpoint")
	if d, err := Load(dir); err != nil || len(d.Pods) != 0 {
		t.Fatalf("Load of a missing checkpoint = %v, %v; want an empty state", d, err)
	}
	if err := Save(dir, sample()); err != nil {
		t.Fatal(err)
	}
	// A write a kill interrupted left its temporary file: Load removes it.
	if err := os.WriteFile(filepath.Join(dir, "."+FileName+".12345"), []byte("{half"), 0o600); err != nil {
		t.Fatal(err)
	}
	d, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !sameData(t, d, sample()) {
		t.Errorf("Load = %+v, want %+v", d, sample())
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		t.Errorf("the directory holds %d files, want only %s (no temporary file left)", len(ents), FileName)
	}
}

func TestLoadMovesACorruptFileAside(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, FileName)
	if err := os.WriteFile(path, []byte(`{"version":1,"checksum":1,"data":{"pods":[]}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	d, err := Load(dir)
	if err == nil || !strings.Contains(err.Error(), "checksum") || !strings.Contains(err.Error(), "moved to") {
		t.Fatalf("Load of a corrupt checkpoint: error %v, want the checksum and where it was moved", err)
	}
	if len(d.Pods) != 0 {
		t.Errorf("Load of a corrupt checkpoint returned pods %v", d.Pods)
	}
	if _, err := os.Stat(path + ".corrupt"); err != nil {
		t.Errorf("the corrupt file was not moved aside: %v", err)
	}
	// The next start begins afresh.
	if d, err := Load(dir); err != nil || len(d.Pods) != 0 {
		t.Errorf("Load after the corrupt file was moved aside = %v, %v; want an empty state", d, err)
	}
}

// sameData says a and b hold the same state (the same encoding: times compare by instant,
// an empty list as a missing one).
func sameData(t *testing.T, a, b Data) bool {
	t.Helper()
	ea, err := Encode(a)
	if err != nil {
		t.Fatal(err)
	}
	eb, err := Encode(b)
	if err != nil {
		t.Fatal(err)
	}
	return string(ea) == string(eb)
}

type fakePods struct {
	mu   sync.Mutex
	pods []Pod
}

func (f *fakePods) Pods() []Pod {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]Pod(nil), f.pods...)
}

func (f *fakePods) set(p []Pod) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.pods = p
}

type fakeBackOffs map[types.UID][]BackOff

func (f fakeBackOffs) BackOffs() map[types.UID][]BackOff { return f }

var (
	_ Sources  = (*fakePods)(nil)
	_ BackOffs = fakeBackOffs(nil)
)

func TestKeeperWritesWhatChanged(t *testing.T) {
	dir := t.TempDir()
	pods := &fakePods{pods: []Pod{{UID: "a", Namespace: "default", Name: "web", StartTime: start}}}
	backOffs := fakeBackOffs{
		"a":    {{Key: "web_default_a_main_1", Delay: metav1.Duration{Duration: 20 * time.Second}}},
		"gone": {{Key: "old_default_gone_main_1", Delay: metav1.Duration{Duration: 10 * time.Second}}},
	}
	k, err := NewKeeper(Config{Dir: dir, Period: time.Second}, Deps{Pods: pods, BackOffs: backOffs, Clock: clocktesting.NewFakeClock(start.Time)})
	if err != nil {
		t.Fatal(err)
	}
	k.Write()
	d, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := Data{Pods: []Pod{{UID: "a", Namespace: "default", Name: "web", StartTime: start, BackOffs: backOffs["a"]}}}
	if !sameData(t, d, want) {
		t.Errorf("checkpoint = %+v, want %+v (the back-off of a pod that is gone dropped)", d, want)
	}
	info1, _ := os.Stat(filepath.Join(dir, FileName))

	// Unchanged: not rewritten (the same file, not a new one renamed over it).
	k.Write()
	if info2, _ := os.Stat(filepath.Join(dir, FileName)); !os.SameFile(info1, info2) {
		t.Error("an unchanged state was written again")
	}
	pods.set(nil)
	k.Write()
	if d, _ := Load(dir); len(d.Pods) != 0 {
		t.Errorf("after every pod left, the checkpoint still holds %v", d.Pods)
	}
}

func TestKeeperRunWritesOnTicksAndAtTheEnd(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		dir := t.TempDir()
		pods := &fakePods{}
		k, err := NewKeeper(Config{Dir: dir, Period: time.Second}, Deps{Pods: pods, BackOffs: fakeBackOffs{}, Clock: clock.RealClock{}})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { k.Run(ctx); close(done) }()
		synctest.Wait() // the first write, then the ticker
		pods.set([]Pod{{UID: "a", StartTime: start}})
		if d, err := Load(dir); err != nil || len(d.Pods) != 0 {
			t.Fatalf("before a tick: checkpoint %v, %v; want the first, empty state", d, err)
		}
		time.Sleep(time.Second)
		synctest.Wait()
		if d, err := Load(dir); err != nil || len(d.Pods) != 1 {
			t.Fatalf("after a tick: checkpoint %v, %v; want the pod", d, err)
		}
		pods.set([]Pod{{UID: "a", StartTime: start}, {UID: "b", StartTime: start}})
		cancel()
		<-done
		if d, err := Load(dir); err != nil || len(d.Pods) != 2 {
			t.Errorf("after Run ended: checkpoint %v, %v; want the last state (2 pods) written at the end", d, err)
		}
	})
	if _, err := NewKeeper(Config{Dir: t.TempDir()}, Deps{}); err == nil {
		t.Error("NewKeeper without a period and deps succeeded")
	}
}
