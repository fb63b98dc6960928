# failures.awk: from `go test -v` output, the first line of every t.Log/t.Error of each failing
# test (not the nodelet logs under them), cut at 400 characters, at most the last 30 per test: CI
# shows the head and the tail of the output, and a failing end-to-end test prints thousands of
# log lines in between. Tests keep what matters on few entries (one t.Logf for a list).
# Usage: awk -f hack/lib/failures.awk LOG
/^=== (RUN|CONT)/ { cur = $3; next }
/^ +[A-Za-z0-9_]+_test\.go:[0-9]+: / {
	if (cur == "") next
	k = ++count[cur]
	lines[cur, k] = substr($0, 1, 400)
	next
}
/^[ ]*--- FAIL: / { name = $3; failed[++n] = name; next }
END {
	if (n == 0) exit 0
	print "\n=== failing tests, what they said (the whole output is above)"
	for (i = 1; i <= n; i++) {
		t = failed[i]
		print "--- FAIL: " t
		from = count[t] > 30 ? count[t] - 29 : 1
		if (from > 1) print "    (" from - 1 " earlier entries left out)"
		for (k = from; k <= count[t]; k++) print lines[t, k]
	}
}
