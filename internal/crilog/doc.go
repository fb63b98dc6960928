// Package crilog reads container log files in the CRI format, the one containerd writes under
// /var/log/pods and the kubelet reads back (k8s.io/cri-client/pkg/logs): one record a line,
//
//	<RFC3339Nano time> <stdout|stderr> <F|P>[:more tags] <content>
//
// where a P (partial) record is continued by the next record of the same stream and an F (full)
// record ends a line. Both nodelet's /containerLogs handler (internal/server) and the runtime
// manager's FallbackToLogsOnError termination messages (internal/kuberuntime) read logs with it.
//
// Layers, each usable alone:
//
//   - ParseRecord parses one record (without its newline) into a Record, with the errors of
//     upstream's parseCRILog; a record's tags after the first are ignored, as upstream.
//   - Joiner joins partial records into Lines, separately for stdout and stderr, so a line is
//     timestamped with its first record's time and is emitted when its final record is read
//     (stdout and stderr lines therefore come in the order they were completed). A line
//     growing past MaxLine without its final record is emitted in MaxLine pieces (Continued
//     marks the pieces after the first), so a container cannot make a reader buffer without
//     bound.
//   - Reader reads a file that may still grow: a record is only parsed once its newline is in
//     the file; ReadAvailable emits the lines completed so far, Finish what is left when
//     nothing more will be written (an unterminated last record, lines without their final
//     record). Records that are not in the CRI format are logged and skipped, as upstream;
//     a record longer than MaxRecord (containerd splits lines at 16 KiB, so it is a corrupt
//     file) is skipped up to its newline.
//   - Ring keeps the last n lines (tailLines).
//   - Tail returns the end of a finished log as one string: upstream's
//     readLastStringFromContainerLogs, for termination messages.
//
// Unlike upstream, which counts raw records for tailLines, everything here counts joined lines.
package crilog
