package logrotation

import (
	"slices"
	"testing"
	"time"
)

const testLog = "/logs/c/0.log"

// at is 2026-03-01 12:00:00 UTC plus sec seconds.
func at(sec int) time.Time {
	return time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC).Add(time.Duration(sec) * time.Second)
}

// r names a rotated file of testLog: r("120000", ".gz") is /logs/c/0.log.20260301-120000.gz.
func r(hms, suffix string) string { return testLog + ".20260301-" + hms + suffix }

func TestSplitUnused(t *testing.T) {
	tests := []struct {
		name              string
		files             []string
		inUse, wantUnused []string
	}{
		{"none", nil, nil, nil},
		{"rotated and compressed are in use",
			[]string{r("120000", ".gz"), r("120010", "")},
			[]string{r("120000", ".gz"), r("120010", "")}, nil},
		{"tmp files are leftovers",
			[]string{r("120000", ".tmp"), r("120000", "")},
			[]string{r("120000", "")}, []string{r("120000", ".tmp")}},
		{"an original whose .gz exists is a leftover",
			[]string{r("120000", ""), r("120000", ".gz"), r("120010", "")},
			[]string{r("120000", ".gz"), r("120010", "")}, []string{r("120000", "")}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			inUse, unused := splitUnused(tc.files)
			if !slices.Equal(inUse, tc.inUse) || !slices.Equal(unused, tc.wantUnused) {
				t.Errorf("splitUnused = %q, %q; want %q, %q", inUse, unused, tc.inUse, tc.wantUnused)
			}
		})
	}
}

func TestSplitExcess(t *testing.T) {
	files := []string{r("120020", ""), r("120000", ".gz"), r("120010", ".gz")}
	tests := []struct {
		keep         int
		excess, kept []string
	}{
		{keep: 0, excess: []string{r("120000", ".gz"), r("120010", ".gz"), r("120020", "")}, kept: []string{}},
		{keep: -1, excess: []string{r("120000", ".gz"), r("120010", ".gz"), r("120020", "")}, kept: []string{}},
		{keep: 1, excess: []string{r("120000", ".gz"), r("120010", ".gz")}, kept: []string{r("120020", "")}},
		{keep: 3, excess: []string{}, kept: []string{r("120000", ".gz"), r("120010", ".gz"), r("120020", "")}},
		{keep: 10, excess: []string{}, kept: []string{r("120000", ".gz"), r("120010", ".gz"), r("120020", "")}},
	}
	for _, tc := range tests {
		excess, kept := splitExcess(files, tc.keep)
		if !slices.Equal(excess, tc.excess) || !slices.Equal(kept, tc.kept) {
			t.Errorf("splitExcess(keep %d) = %q, %q; want %q, %q", tc.keep, excess, kept, tc.excess, tc.kept)
		}
	}
}

func TestRotatedName(t *testing.T) {
	tests := []struct {
		name    string
		now     time.Time
		rotated []string
		want    string
	}{
		{"upstream's format", at(0), nil, r("120000", "")},
		{"older files do not matter", at(10), []string{r("120000", ".gz"), r("120005", "")}, r("120010", "")},
		{"same second as an uncompressed one", at(0), []string{r("120000", "")}, r("120001", "")},
		{"same second as a compressed one", at(0), []string{r("120000", ".gz")}, r("120001", "")},
		{"clock set back: past the newest", at(0), []string{r("115900", ".gz"), r("130000", "")}, r("130001", "")},
		{"carries over midnight", time.Date(2026, 3, 1, 23, 59, 59, 0, time.UTC),
			[]string{testLog + ".20260301-235959"}, testLog + ".20260302-000000"},
		{"names not in the format are ignored", at(0), []string{testLog + ".old", testLog + ".99999999-999999"}, r("120000", "")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := rotatedName(testLog, tc.now, tc.rotated); got != tc.want {
				t.Errorf("rotatedName = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestPlanRotation(t *testing.T) {
	tests := []struct {
		name     string
		files    []string
		maxFiles int
		now      time.Time
		want     plan
	}{
		{"first rotation", nil, 5, at(0), plan{rotated: r("120000", "")}},
		{"previous rotation is compressed", []string{r("120000", "")}, 5, at(10),
			plan{compress: []string{r("120000", "")}, rotated: r("120010", "")}},
		{"within budget: compress only the uncompressed",
			[]string{r("120010", ""), r("120000", ".gz")}, 5, at(20),
			plan{compress: []string{r("120010", "")}, rotated: r("120020", "")}},
		{"over budget: oldest removed first",
			[]string{r("120030", ""), r("120000", ".gz"), r("120010", ".gz"), r("120020", ".gz")}, 4, at(40),
			plan{remove: []string{r("120000", ".gz"), r("120010", ".gz")}, compress: []string{r("120030", "")}, rotated: r("120040", "")}},
		{"maxFiles 2 keeps no older rotated file",
			[]string{r("120000", "")}, 2, at(10),
			plan{remove: []string{r("120000", "")}, rotated: r("120010", "")}},
		{"leftovers removed before the excess",
			[]string{r("120000", ".tmp"), r("120010", ""), r("120010", ".gz"), r("120020", "")}, 5, at(30),
			plan{remove: []string{r("120000", ".tmp"), r("120010", "")}, compress: []string{r("120020", "")}, rotated: r("120030", "")}},
		{"collision moves the name on",
			[]string{r("120000", "")}, 5, at(0),
			plan{compress: []string{r("120000", "")}, rotated: r("120001", "")}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := planRotation(testLog, tc.files, tc.maxFiles, tc.now)
			if !slices.Equal(got.remove, tc.want.remove) || !slices.Equal(got.compress, tc.want.compress) || got.rotated != tc.want.rotated {
				t.Errorf("planRotation =\n  %+v\nwant\n  %+v", got, tc.want)
			}
			// After the plan: the new log, the rotated one and the kept ones.
			if n := len(tc.files) - len(got.remove) + 2; n > tc.maxFiles {
				t.Errorf("%d files would remain, more than maxFiles %d", n, tc.maxFiles)
			}
		})
	}
}
