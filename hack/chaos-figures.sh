#!/usr/bin/env bash
# chaos-figures.sh LOG DOC: copies the figures of the chaos suite (the `CHAOS name=... k=v ...`
# lines that the TestChaos* tests print, found in the go test output LOG) into the table of DOC
# (docs/reliability.md) between the lines <!-- chaos-figures:begin --> and
# <!-- chaos-figures:end -->. A scenario's row is replaced when LOG has its line and kept
# otherwise (a row for a new scenario is added at the end), so a run of one test updates one row.
# `make chaos` runs it.
set -euo pipefail
[[ $# -eq 2 ]] || { echo "usage: $0 LOG DOC" >&2; exit 2; }
log=$1 doc=$2

cgroup=v1
[[ $(stat -fc %T /sys/fs/cgroup 2>/dev/null) == cgroup2fs ]] && cgroup=v2
ctrd=$("${NODELET_BIN_CACHE:-/var/cache/nodelet/bin}/containerd" --version 2>/dev/null | awk '{v = $3; sub(/\+.*/, "", v); print v}' || true)
machine="$(date -u +%Y-%m-%d), $(nproc) cores, cgroup $cgroup, containerd ${ctrd:-unknown}"

rows=$(grep -o 'CHAOS name=.*' "$log" | awk -v machine="$machine" '
{
	delete f; order = ""
	for (i = 2; i <= NF; i++) {
		k = substr($i, 1, index($i, "=") - 1); v = substr($i, index($i, "=") + 1)
		f[k] = v; order = order " " k
	}
	name = f["name"]
	if (name == "kill-nodelet") fault = "nodelet SIGKILLed " f["kills"] " times, 0.3-2 s after each start"
	else if (name == "containerd-restart") fault = "containerd SIGKILLed once (" f["ready_at_kill"] " pods up), started again 3 s later"
	else if (name == "apiserver-outage") fault = "kube-apiserver stopped " f["outage_seconds"] " s; 5 static pods added, 1 removed, 1 API pod ends"
	else fault = name
	split("name pods kills containerd_kills ready_at_kill outage_seconds duplicates lost leaked_sandboxes leaked_containers leaked_mounts leaked_cgroups leaked_dirs seconds", fixed, " ")
	delete isfixed
	for (i in fixed) isfixed[fixed[i]] = 1
	n = split(substr(order, 2), keys, " "); other = ""
	for (i = 1; i <= n; i++) if (!(keys[i] in isfixed)) other = other (other == "" ? "" : " ") keys[i] "=" f[keys[i]]
	printf "| `%s` | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s s | %s |\n", name, fault, f["pods"],
		f["duplicates"], f["lost"], f["leaked_sandboxes"], f["leaked_containers"], f["leaked_mounts"],
		f["leaked_cgroups"], f["leaked_dirs"], other, f["seconds"], machine
}')
[[ -n $rows ]] || { echo "$0: no CHAOS lines in $log; $doc left as it was" >&2; exit 1; }
grep -q '^<!-- chaos-figures:begin -->$' "$doc" && grep -q '^<!-- chaos-figures:end -->$' "$doc" ||
	{ echo "$0: $doc has no chaos-figures markers" >&2; exit 1; }

tmp=$(mktemp "$doc.XXXXXX")
awk -v rows="$rows" '
BEGIN {
	n = split(rows, r, "\n")
	for (i = 1; i <= n; i++) { name = r[i]; sub(/^\| `/, "", name); sub(/`.*/, "", name); row[name] = r[i]; names[i] = name }
}
/^<!-- chaos-figures:begin -->$/ { inside = 1; print; next }
/^<!-- chaos-figures:end -->$/ {
	for (i = 1; i <= n; i++) if (!(names[i] in done)) print row[names[i]]
	inside = 0; print; next
}
inside && /^\| `/ {
	name = $0; sub(/^\| `/, "", name); sub(/`.*/, "", name)
	if (name in row) { print row[name]; done[name] = 1; next }
}
{ print }
' "$doc" >"$tmp"
cat "$tmp" >"$doc"
rm -f "$tmp"
echo "$0: $(wc -l <<<"$rows") scenario(s) written to $doc" >&2
