package main

import "testing"

func TestSpread(t *testing.T) {
	for _, tc := range []struct {
		vals []float64
		prec int
		want string
	}{
		{[]float64{3, 1, 2}, 2, "2.00 s (1.00–3.00)"},
		{[]float64{4, 1, 2, 3}, 1, "2.5 s (1.0–4.0)"},
		{[]float64{1.001, 1.002}, 2, "1.00 s"},
		{[]float64{7}, 0, "7 s"},
	} {
		if got := spreadOf(tc.vals).cell(tc.prec, " s"); got != tc.want {
			t.Errorf("spreadOf(%v).cell(%d) = %q, want %q", tc.vals, tc.prec, got, tc.want)
		}
	}
}

func TestParseCPUTimes(t *testing.T) {
	got, err := parseCPUTimes("cpu  100 5 50 800 20 3 2 10 7 0\ncpu0 1 2 3 4 5 6 7 8 9 10\n")
	if err != nil {
		t.Fatal(err)
	}
	if got.total != 990 || got.idle != 820 {
		t.Errorf("parseCPUTimes = %+v, want total 990, idle 820", got)
	}
	if s := idleShare(cpuTimes{100, 50}, cpuTimes{200, 140}); s != 0.9 {
		t.Errorf("idleShare = %v, want 0.9", s)
	}
	if _, err := parseCPUTimes("intr 1 2 3"); err == nil {
		t.Error("parseCPUTimes accepted a line that is not the cpu line")
	}
}
