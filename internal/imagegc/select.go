package imagegc

import (
	"sort"
	"time"

	"k8s.io/apimachinery/pkg/util/sets"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// Record is what the collector knows of one image (upstream's imageRecord).
type Record struct {
	FirstDetected time.Time
	LastUsed      time.Time // zero: never seen in use
	Size          int64
	Pinned        bool
}

// Detect is upstream's detectImages: the records of the images the runtime has now, new ones
// detected now, those in use marked used now; images gone are forgotten. It returns a new map.
func Detect(old map[string]Record, images []*runtimeapi.Image, inUse sets.Set[string], now time.Time) map[string]Record {
	out := make(map[string]Record, len(images))
	for _, img := range images {
		r, ok := old[img.GetId()]
		if !ok {
			r = Record{FirstDetected: now}
		}
		if inUse.Has(img.GetId()) {
			r.LastUsed = now
		}
		r.Size, r.Pinned = int64(img.GetSize()), img.GetPinned()
		out[img.GetId()] = r
	}
	return out
}

// Candidate is an image that may be removed.
type Candidate struct {
	ID string
	Record
}

// EvictionOrder is upstream's imagesInEvictionOrder: the images neither in use nor pinned,
// least recently used first, then first detected first.
func EvictionOrder(records map[string]Record, inUse sets.Set[string]) []Candidate {
	out := make([]Candidate, 0, len(records))
	for id, r := range records {
		if inUse.Has(id) || r.Pinned {
			continue
		}
		out = append(out, Candidate{ID: id, Record: r})
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].LastUsed.Equal(out[j].LastUsed) {
			return out[i].LastUsed.Before(out[j].LastUsed)
		}
		if !out[i].FirstDetected.Equal(out[j].FirstDetected) {
			return out[i].FirstDetected.Before(out[j].FirstDetected)
		}
		return out[i].ID < out[j].ID
	})
	return out
}

// OldImages is upstream's freeOldImages: of the candidates, those unused for longer than
// maxAge, once nodelet has run longer than maxAge (began is when its collection began).
// maxAge 0 removes none.
func OldImages(order []Candidate, now, began time.Time, maxAge time.Duration) (remove, keep []Candidate) {
	if maxAge == 0 || now.Sub(began) <= maxAge {
		return nil, order
	}
	for _, c := range order {
		if now.Sub(c.LastUsed) > maxAge {
			remove = append(remove, c)
		} else {
			keep = append(keep, c)
		}
	}
	return remove, keep
}

// FreeSpace is upstream's freeSpace: the candidates to remove, in order, until their sizes
// add up to bytesToFree, skipping images used now and those detected less than minAge ago.
func FreeSpace(order []Candidate, bytesToFree int64, now time.Time, minAge time.Duration) []Candidate {
	var out []Candidate
	freed := int64(0)
	for _, c := range order {
		if freed >= bytesToFree {
			break
		}
		if !c.LastUsed.Before(now) || now.Sub(c.FirstDetected) < minAge {
			continue
		}
		out = append(out, c)
		freed += c.Size
	}
	return out
}

// Usage is upstream's threshold check: the image filesystem's usage in percent, and, when it
// is at least high%, the bytes to free to bring it down to low%.
func Usage(capacity, available int64, high, low int) (percent int, toFree int64) {
	if available > capacity {
		available = capacity
	}
	percent = 100 - int(available*100/capacity)
	if percent < high {
		return percent, 0
	}
	return percent, capacity*int64(100-low)/100 - available
}
