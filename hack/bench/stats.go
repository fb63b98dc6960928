package main

import (
	"fmt"
	"sort"
)

// spread is the median, minimum and maximum of a set of runs.
type spread struct{ median, min, max float64 }

func spreadOf(vals []float64) spread {
	if len(vals) == 0 {
		return spread{}
	}
	s := append([]float64(nil), vals...)
	sort.Float64s(s)
	m := s[len(s)/2]
	if len(s)%2 == 0 {
		m = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return spread{median: m, min: s[0], max: s[len(s)-1]}
}

// cell formats a spread as "1.23 s (1.10–1.40)": the median, then min–max when they differ.
func (s spread) cell(prec int, unit string) string {
	v := fmt.Sprintf("%.*f%s", prec, s.median, unit)
	lo, hi := fmt.Sprintf("%.*f", prec, s.min), fmt.Sprintf("%.*f", prec, s.max)
	if lo == hi {
		return v
	}
	return fmt.Sprintf("%s (%s–%s)", v, lo, hi)
}

// collect maps each run to one number.
func collect[T any](runs []T, f func(T) float64) []float64 {
	out := make([]float64, len(runs))
	for i, r := range runs {
		out[i] = f(r)
	}
	return out
}
