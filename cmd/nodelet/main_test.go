package main

import (
	"runtime/debug"
	"testing"
)

func TestSetGCPercent(t *testing.T) {
	old := debug.SetGCPercent(100)
	t.Cleanup(func() { debug.SetGCPercent(old) })

	unset := func(string) (string, bool) { return "", false }
	if got := setGCPercent(unset); got != defaultGCPercent {
		t.Errorf("without GOGC: %d, want %d", got, defaultGCPercent)
	}
	if got := debug.SetGCPercent(100); got != defaultGCPercent {
		t.Errorf("without GOGC the collector runs at %d, want %d", got, defaultGCPercent)
	}

	// GOGC set: the runtime's value (parsed at start; 100 here) stays.
	set := func(k string) (string, bool) { return "100", k == "GOGC" }
	if got := setGCPercent(set); got != 100 {
		t.Errorf("with GOGC=100: %d, want the environment's 100", got)
	}
	if got := debug.SetGCPercent(100); got != 100 {
		t.Errorf("with GOGC set the collector runs at %d, want 100", got)
	}
}
