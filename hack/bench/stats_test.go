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
