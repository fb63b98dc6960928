package criconfig

import "strings"

// Expand replaces $(VAR) references in s using lookup, with the kubelet's rules: $$ is an
// escaped $, and a reference to a variable lookup does not know is left as written. The
// upstream implementation lives in k8s.io/kubernetes/third_party, which is not importable, so
// this is a small re-implementation of the same grammar.
func Expand(s string, lookup func(string) (string, bool)) string {
	if !strings.Contains(s, "$") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '$' || i+1 >= len(s) {
			b.WriteByte(s[i])
			continue
		}
		switch s[i+1] {
		case '$': // escaped
			b.WriteByte('$')
			i++
		case '(':
			end := strings.IndexByte(s[i+2:], ')')
			if end < 0 { // unterminated: "$(" is kept as written
				b.WriteString("$(")
				i++
				continue
			}
			name := s[i+2 : i+2+end]
			if v, ok := lookup(name); ok {
				b.WriteString(v)
			} else {
				b.WriteString("$(" + name + ")")
			}
			i += 2 + end
		default:
			b.WriteByte('$')
		}
	}
	return b.String()
}
