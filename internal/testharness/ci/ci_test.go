package ci

import (
	"fmt"
	"testing"
)

// recorder is a testing.TB that records how the test would have ended.
type recorder struct {
	testing.TB
	fatal, skip string
}

func (r *recorder) Helper()                      {}
func (r *recorder) Name() string                 { return "TestX" }
func (r *recorder) Fatalf(f string, args ...any) { r.fatal = fmt.Sprintf(f, args...) }
func (r *recorder) Skipf(f string, args ...any)  { r.skip = fmt.Sprintf(f, args...) }

func TestSkip(t *testing.T) {
	for ci, fails := range map[string]bool{"": false, "false": false, "0": false, "true": true, "1": true} {
		t.Setenv("CI", ci)
		r := &recorder{}
		Skip(r, "no %s", "cgroups")
		switch {
		case fails && (r.fatal != "no cgroups (CI is set, so not running the test is a failure)" || r.skip != ""):
			t.Errorf("CI=%q: fatal %q, skip %q; want a failure", ci, r.fatal, r.skip)
		case !fails && (r.skip != "SKIPPED: no cgroups (set CI=true to make this a failure)" || r.fatal != ""):
			t.Errorf("CI=%q: fatal %q, skip %q; want a skip", ci, r.fatal, r.skip)
		}
	}
}
