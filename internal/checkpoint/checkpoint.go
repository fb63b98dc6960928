package checkpoint

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/nodelet/nodelet/internal/atomicfile"
)

// Version is the format's version; a file of another version is not read.
const Version = 1

// FileName is the checkpoint's name in its directory.
const FileName = "pods.json"

// Data is what the checkpoint holds.
type Data struct {
	Pods []Pod `json:"pods"`
}

// Pod is one pod's state.
type Pod struct {
	UID       types.UID   `json:"uid"`
	Namespace string      `json:"namespace"`
	Name      string      `json:"name"`
	StartTime metav1.Time `json:"startTime"`
	BackOffs  []BackOff   `json:"backOffs,omitempty"`
}

// BackOff is a container's crash back-off: the delay before its next restart.
type BackOff struct {
	// Key is the runtime manager's back-off key (pod, container and spec hash: a changed spec
	// starts a new back-off, as upstream).
	Key   string          `json:"key"`
	Delay metav1.Duration `json:"delay"`
}

type file struct {
	Version  int             `json:"version"`
	Checksum uint32          `json:"checksum"`
	Data     json.RawMessage `json:"data"`
}

// Encode renders d as the checkpoint file's content: sorted, so that an unchanged state is the
// same bytes.
func Encode(d Data) ([]byte, error) {
	d = sorted(d)
	data, err := json.Marshal(d)
	if err != nil {
		return nil, fmt.Errorf("encode the checkpoint: %w", err)
	}
	return wrap(data)
}

// Decode parses a checkpoint file's content; an error says why it cannot be used.
func Decode(b []byte) (Data, error) {
	var d Data
	if err := unwrap(b, &d); err != nil {
		return Data{}, err
	}
	return d, nil
}

// wrap puts data (JSON) in the versioned, checksummed envelope.
func wrap(data []byte) ([]byte, error) {
	out, err := json.Marshal(file{Version: Version, Checksum: crc32.ChecksumIEEE(data), Data: data})
	if err != nil {
		return nil, fmt.Errorf("encode the checkpoint: %w", err)
	}
	return append(out, '\n'), nil
}

// unwrap checks the envelope and decodes its data into v.
func unwrap(b []byte, v any) error {
	var f file
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return fmt.Errorf("not a checkpoint: %w", err)
	}
	if f.Version != Version {
		return fmt.Errorf("version %d, this nodelet reads version %d", f.Version, Version)
	}
	if sum := crc32.ChecksumIEEE(f.Data); sum != f.Checksum {
		return fmt.Errorf("checksum %d does not match its data (%d)", f.Checksum, sum)
	}
	if err := json.Unmarshal(f.Data, v); err != nil {
		return fmt.Errorf("data: %w", err)
	}
	return nil
}

func sorted(d Data) Data {
	pods := slices.Clone(d.Pods)
	slices.SortFunc(pods, func(a, b Pod) int { return strings.Compare(string(a.UID), string(b.UID)) })
	for i := range pods {
		pods[i].BackOffs = slices.Clone(pods[i].BackOffs)
		slices.SortFunc(pods[i].BackOffs, func(a, b BackOff) int { return strings.Compare(a.Key, b.Key) })
	}
	return Data{Pods: pods}
}

// Load reads the checkpoint in dir. A missing file is an empty state. A file that cannot be
// used is moved aside to <name>.corrupt and its error returned with an empty state: the
// caller logs it and starts without. Temporary files of interrupted writes are removed.
func Load(dir string) (Data, error) {
	var d Data
	err := loadFile(dir, FileName, func(b []byte) (err error) { d, err = Decode(b); return err })
	if err != nil {
		return Data{}, err
	}
	return d, nil
}

// loadFile reads dir/name with decode; see Load.
func loadFile(dir, name string, decode func([]byte) error) error {
	// A write a kill interrupted leaves its temporary file: nothing reads it.
	if stale, err := filepath.Glob(filepath.Join(dir, "."+name+".*")); err == nil {
		for _, f := range stale {
			_ = os.Remove(f)
		}
	}
	path := filepath.Join(dir, name)
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read the checkpoint %s: %w", path, err)
	}
	if err := decode(b); err != nil {
		aside := path + ".corrupt"
		if rerr := os.Rename(path, aside); rerr != nil {
			return fmt.Errorf("checkpoint %s: %w (and moving it aside failed: %v)", path, err, rerr)
		}
		return fmt.Errorf("checkpoint %s: %w; moved to %s, starting without it", path, err, aside)
	}
	return nil
}

// Save writes d to dir atomically: a temporary file, synced, renamed over the checkpoint, and
// the directory synced.
func Save(dir string, d Data) error {
	b, err := Encode(d)
	if err != nil {
		return err
	}
	return writeAtomic(dir, b)
}

func writeAtomic(dir string, b []byte) error { return writeFileAtomic(dir, FileName, b) }

func writeFileAtomic(dir, name string, b []byte) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("create the checkpoint directory: %w", err)
	}
	if err := atomicfile.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	return nil
}

// Sources give the state to keep.
type Sources interface {
	// Pods returns the pods' start times (pods not started yet are left out).
	Pods() []Pod
}

// BackOffs gives the containers' crash back-offs by pod.
type BackOffs interface {
	BackOffs() map[types.UID][]BackOff
}

// Config configures a Keeper.
type Config struct {
	// Dir is the checkpoint's directory (<root-dir>/checkpoint).
	Dir string
	// Period is how often the state is collected and, when it changed, written.
	Period time.Duration
}

// Deps are a Keeper's collaborators.
type Deps struct {
	Pods     Sources
	BackOffs BackOffs
	Clock    clock.WithTicker
}

// Keeper writes the checkpoint while nodelet runs.
type Keeper struct {
	cfg  Config
	deps Deps
	last []byte
}

// NewKeeper returns a Keeper; every field of Config and Deps is required.
func NewKeeper(cfg Config, deps Deps) (*Keeper, error) {
	if cfg.Dir == "" || cfg.Period <= 0 || deps.Pods == nil || deps.BackOffs == nil || deps.Clock == nil {
		return nil, errors.New("checkpoint: Dir, a positive Period, Pods, BackOffs and Clock are required")
	}
	return &Keeper{cfg: cfg, deps: deps}, nil
}

// Run writes the checkpoint every period it changed, and once more when ctx ends.
func (k *Keeper) Run(ctx context.Context) {
	t := k.deps.Clock.NewTicker(k.cfg.Period)
	defer t.Stop()
	for {
		k.Write()
		select {
		case <-ctx.Done():
			k.Write()
			return
		case <-t.C():
		}
	}
}

// Write collects the state and writes it if it changed since the last write.
func (k *Keeper) Write() {
	b, err := Encode(Collect(k.deps.Pods.Pods(), k.deps.BackOffs.BackOffs()))
	if err != nil {
		klog.ErrorS(err, "Cannot encode the checkpoint; start times and back-offs may be lost at a restart")
		return
	}
	if bytes.Equal(b, k.last) {
		return
	}
	if err := writeAtomic(k.cfg.Dir, b); err != nil {
		klog.ErrorS(err, "Cannot write the checkpoint; start times and back-offs may be lost at a restart (check the root directory's disk)", "dir", k.cfg.Dir)
		return
	}
	k.last = b
}

// Collect joins the pods with their back-offs: back-offs of pods that are gone are dropped.
func Collect(pods []Pod, backOffs map[types.UID][]BackOff) Data {
	out := make([]Pod, 0, len(pods))
	for _, p := range pods {
		p.BackOffs = backOffs[p.UID]
		out = append(out, p)
	}
	return Data{Pods: out}
}
