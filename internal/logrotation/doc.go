// Package logrotation rotates the log files of running containers and removes the logs of removed
// ones: upstream's ContainerLogManager (pkg/kubelet/logs/container_log_manager.go).
//
// The container runtime writes a container's stdout and stderr to the file at its CRI LogPath
// (/var/log/pods/<ns>_<pod>_<uid>/<container>/<restartCount>.log). Manager.Run checks every
// running container at once and then every MonitorInterval (containerLogMonitorInterval, 10s):
// it lists the RUNNING containers, reads each one's LogPath from ContainerStatus, and when the
// file has reached MaxSize bytes (containerLogMaxSize, 10Mi) rotates it, MaxWorkers
// (containerLogMaxWorkers, 1) containers at a time:
//
//  1. remove the leftovers of an interrupted rotation (<log>.*.tmp, and an uncompressed file
//     whose .gz exists), then the oldest rotated files, so that at most MaxFiles files
//     (containerLogMaxFiles, default 5) remain once the rotation is done;
//  2. gzip the remaining uncompressed rotated files into <file>.gz, writing a temporary
//     <file>.tmp renamed into place, so that a crash never leaves a partial .gz;
//  3. rename the log to <log>.<YYYYMMDD-hhmmss> (the clock's local time);
//  4. ask the runtime to ReopenContainerLog, which makes it write to a new file at LogPath. If
//     that fails the log is renamed back and the next interval tries again.
//
// The newest rotated file is therefore left uncompressed: the runtime may still be flushing to
// it and log shippers may still be reading it. Rotated names sort oldest first, which is the
// order readers such as `kubectl logs` and removal rely on. A log missing from its path is
// recreated by a ReopenContainerLog, as upstream.
//
// Which files to remove and compress and the rotated name are decided by the pure planRotation;
// Manager only carries the plan out. Failures are logged with pod=, container= and containerID=
// and retried at the next interval.
//
// Clean removes a container's current and rotated logs; the runtime manager calls it before
// removing the container from the runtime (the log path comes from the container's status).
//
// Differences from upstream:
//
//   - Rotated names never collide: when <log>.<now> is not newer than every existing rotated
//     file (two rotations in one second, a clock set back), the timestamp is moved one second
//     past the newest. Upstream would overwrite the older file when compressing.
//   - Each interval's pass over the containers finishes before the next starts, instead of
//     feeding a rate-limited work queue; a container is still never rotated twice at once.
//     The runtime is asked for running containers only (a state filter) rather than filtering
//     all containers locally, and a container whose status is no longer running is skipped.
//   - Clean and the rotation of the same container are serialised; upstream's can race.
//   - A container with an empty log path has nothing rotated or cleaned (upstream would glob
//     "*" in its working directory); a relative log path is refused.
//   - The compressed file is synced before it is renamed into place, and every write and close
//     error is checked.
//   - When ReopenContainerLog fails because the container has meanwhile stopped or gone, this is
//     logged as information, not as an error: the log is simply left in place.
//   - A negative MaxSize disables rotation, as upstream; Clean still removes logs (upstream's
//     stub manager's Clean does nothing).
package logrotation
