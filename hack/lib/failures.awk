# failures.awk: from `go test -v` output, the first line of every t.Log/t.Error of each failing
# test (not the nodelet logs under them), cut at 400 characters: CI shows the head and the tail
# of the output, and a failing end-to-end test prints thousands of log lines in between.
# Usage: awk -f hack/lib/failures.awk LOG
/^=== (RUN|CONT)/ { cur = $3; next }
/^ +[A-Za-z0-9_]+_test\.go:[0-9]+: / { if (cur != "") lines[cur] = lines[cur] substr($0, 1, 400) "\n"; next }
/^[ ]*--- FAIL: / { name = $3; failed[++n] = name; next }
END {
	if (n == 0) exit 0
	print "\n=== failing tests, what they said (the whole output is above)"
	for (i = 1; i <= n; i++) {
		print "--- FAIL: " failed[i]
		printf "%s", lines[failed[i]]
	}
}
