package container

import (
	"encoding/json"
	"hash/fnv"

	v1 "k8s.io/api/core/v1"
	"k8s.io/utils/dump"
)

// HashContainer returns the hash nodelet records in the io.kubernetes.container.hash label. It
// is upstream's HashContainer, byte for byte: FNV-32a of a dump of the JSON of the fields that
// may change in a running pod (name and image), so a container created by the upstream kubelet
// is recognised as unchanged by nodelet and the other way round.
func HashContainer(c *v1.Container) uint64 {
	h := fnv.New32a()
	js, _ := json.Marshal(map[string]string{"name": c.Name, "image": c.Image}) // a map of strings always marshals
	h.Reset()
	_, _ = h.Write([]byte(dump.ForHash(js)))
	return uint64(h.Sum32())
}
