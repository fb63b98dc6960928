package logrotation

import (
	"slices"
	"strings"
	"time"
)

const (
	// timestampFormat is upstream's suffix of a rotated log: <log>.<timestamp>.
	timestampFormat = "20060102-150405"
	// compressSuffix marks a compressed rotated log: <log>.<timestamp>.gz.
	compressSuffix = ".gz"
	// tmpSuffix marks a compression in progress: <log>.<timestamp>.tmp.
	tmpSuffix = ".tmp"
)

// plan is what one rotation of a log does, in order: remove, compress, then rename the log to
// rotated and ask the runtime to reopen it.
type plan struct {
	// remove lists the files to delete: leftovers of an interrupted rotation first, then the
	// oldest rotated logs beyond the MaxFiles budget.
	remove []string
	// compress lists the kept rotated logs that are not compressed yet, oldest first.
	compress []string
	// rotated is the name the current log is renamed to.
	rotated string
}

// planRotation decides one rotation of log, given the names of its rotated files (every
// existing <log>.*, in any order), the MaxFiles budget and the time. After the plan is carried
// out at most maxFiles files remain: the new current log, the just-rotated one (uncompressed, so
// that the runtime can finish writing it and log shippers reading it), and maxFiles-2 older
// compressed ones.
func planRotation(log string, files []string, maxFiles int, now time.Time) plan {
	inUse, unused := splitUnused(files)
	excess, kept := splitExcess(inUse, maxFiles-2)
	var p plan
	p.remove = append(unused, excess...)
	for _, f := range kept {
		if !strings.HasSuffix(f, compressSuffix) {
			p.compress = append(p.compress, f)
		}
	}
	p.rotated = rotatedName(log, now, kept)
	return p
}

// splitUnused separates the rotated files still in use from the leftovers of an interrupted
// rotation (upstream's filterUnusedLogs): every .tmp file, and every uncompressed file whose .gz
// already exists (the compression finished, the removal of the original did not).
func splitUnused(files []string) (inUse, unused []string) {
	for _, f := range files {
		switch {
		case strings.HasSuffix(f, tmpSuffix):
			unused = append(unused, f)
		case strings.HasSuffix(f, compressSuffix):
			inUse = append(inUse, f)
		case slices.Contains(files, f+compressSuffix):
			unused = append(unused, f)
		default:
			inUse = append(inUse, f)
		}
	}
	return inUse, unused
}

// splitExcess sorts rotated files oldest first (their timestamps sort as strings) and splits off
// all but the newest keep of them, to be removed oldest first so as not to break a reader
// following the newer ones.
func splitExcess(files []string, keep int) (excess, kept []string) {
	sorted := slices.Sorted(slices.Values(files))
	n := max(len(sorted)-max(keep, 0), 0)
	return sorted[:n], sorted[n:]
}

// rotatedName is <log>.<now in timestampFormat>, upstream's name. Upstream overwrites a rotated
// file of the same name (two rotations in one second, or a clock set back); here the timestamp is
// moved one second past the newest existing one instead, so no log is lost and names keep
// sorting oldest first.
func rotatedName(log string, now time.Time, rotated []string) string {
	ts := now.Format(timestampFormat)
	if latest, ok := latestTimestamp(log, rotated); ok && ts <= latest {
		t, _ := time.Parse(timestampFormat, latest) // latestTimestamp only returns parseable ones
		ts = t.Add(time.Second).Format(timestampFormat)
	}
	return log + "." + ts
}

// latestTimestamp returns the newest timestamp among the rotated files of log that are named
// <log>.<timestamp> or <log>.<timestamp>.gz; other names are ignored.
func latestTimestamp(log string, rotated []string) (string, bool) {
	var latest string
	for _, f := range rotated {
		ts, ok := strings.CutPrefix(f, log+".")
		if !ok {
			continue
		}
		ts = strings.TrimSuffix(ts, compressSuffix)
		if _, err := time.Parse(timestampFormat, ts); err != nil {
			continue
		}
		latest = max(latest, ts)
	}
	return latest, latest != ""
}
