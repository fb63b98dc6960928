package criconfig

import "testing"

func TestExpand(t *testing.T) {
	vars := map[string]string{"A": "alpha", "B": "$(A)", "EMPTY": ""}
	lookup := func(k string) (string, bool) { v, ok := vars[k]; return v, ok }
	cases := map[string]string{
		"plain":      "plain",
		"$(A)":       "alpha",
		"x-$(A)-y":   "x-alpha-y",
		"$$(A)":      "$(A)",
		"$(MISSING)": "$(MISSING)",
		"$(EMPTY)x":  "x",
		"$(A":        "$(A",
		"$A":         "$A",
		"trailing $": "trailing $",
		"$(B)":       "$(A)", // one level only, as upstream
		"$(A)$(A)":   "alphaalpha",
		"$$$$":       "$$",
		"a $$ b":     "a $ b",
		"$()":        "$()",
	}
	for in, want := range cases {
		if got := Expand(in, lookup); got != want {
			t.Errorf("Expand(%q) = %q, want %q", in, got, want)
		}
	}
}
