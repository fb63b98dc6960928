package allocation

import (
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Resources are a pod's container resources by container name (init, sidecar and regular
// containers: names are unique in a pod).
type Resources = map[string]v1.ResourceRequirements

// checkpoint is one record (allocated or actuated) of every pod, kept in a file: JSON with a
// checksum, written to a temporary file and renamed, so that a crash leaves the old or the new
// record, never half of one. It is not safe for concurrent use: the Manager serializes.
type checkpoint struct {
	path string
	pods map[types.UID]Resources
}

type checkpointFile struct {
	Pods     map[types.UID]Resources `json:"pods"`
	Checksum uint32                  `json:"checksum"`
}

func sum(pods map[types.UID]Resources) (uint32, []byte, error) {
	data, err := json.Marshal(pods) // map keys are sorted: the same pods give the same bytes
	if err != nil {
		return 0, nil, err
	}
	h := fnv.New32a()
	_, _ = h.Write(data)
	return h.Sum32(), data, nil
}

// loadCheckpoint reads the record at path; a missing file is an empty record. A corrupt one is
// an error: the caller decides (upstream starts empty and logs).
func loadCheckpoint(path string) (*checkpoint, error) {
	c := &checkpoint{path: path, pods: map[types.UID]Resources{}}
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return c, nil
	}
	if err != nil {
		return c, fmt.Errorf("read %s: %w", path, err)
	}
	var f checkpointFile
	if err := json.Unmarshal(data, &f); err != nil {
		return c, fmt.Errorf("%s is corrupt: %w", path, err)
	}
	if f.Pods == nil {
		f.Pods = map[types.UID]Resources{}
	}
	if got, _, err := sum(f.Pods); err != nil || got != f.Checksum {
		return c, fmt.Errorf("%s is corrupt: checksum mismatch", path)
	}
	c.pods = f.Pods
	return c, nil
}

// save writes the whole record.
func (c *checkpoint) save() error {
	s, _, err := sum(c.pods)
	if err != nil {
		return err
	}
	data, err := json.Marshal(checkpointFile{Pods: c.pods, Checksum: s})
	if err != nil {
		return err
	}
	tmp := filepath.Join(filepath.Dir(c.path), "."+filepath.Base(c.path)+".tmp")
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return fmt.Errorf("write %s: %w", tmp, err)
	}
	if err := os.Rename(tmp, c.path); err != nil {
		return fmt.Errorf("replace %s: %w", c.path, err)
	}
	return nil
}

func (c *checkpoint) get(uid types.UID) (Resources, bool) {
	r, ok := c.pods[uid]
	return r, ok
}

// set records a pod's resources and saves; on a save error the record in memory is kept
// unchanged.
func (c *checkpoint) set(uid types.UID, r Resources) error {
	old, had := c.pods[uid]
	c.pods[uid] = r
	if err := c.save(); err != nil {
		if had {
			c.pods[uid] = old
		} else {
			delete(c.pods, uid)
		}
		return err
	}
	return nil
}

// remove forgets the pods keep rejects and saves when it forgot any.
func (c *checkpoint) remove(drop func(types.UID) bool) error {
	changed := false
	for uid := range c.pods {
		if drop(uid) {
			delete(c.pods, uid)
			changed = true
		}
	}
	if !changed {
		return nil
	}
	return c.save()
}
