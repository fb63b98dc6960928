// Package syncloop is nodelet's main loop: one select over config updates, PLEG events, a 1 s
// sync tick (pods whose next sync is due in the work queue), a 2 s housekeeping tick, probe
// results and pods whose worker has finished; each case hands off to the Dispatcher, which
// updates the desired pods and asks the pod workers to act. While the runtime is not ready the
// loop backs off, 100 ms doubling to 5 s, and says why.
//
// The loop never waits on I/O. Housekeeping decides on the loop from memory (the desired pods,
// SyncKnownPods) and hands a pass to Dispatcher.Run, which lists the runtime's pods, the pod
// directories and the statuses, decides what is left of pods that are gone (decideCleanup,
// pure) and hands it to the remover; a tick that finds the previous pass still running is
// skipped. The remover removes pods on its own goroutines, a few at a time, never one pod twice
// at once, and asks the Dispatcher, when each removal's turn comes, whether the pod may still go
// (claim): a pod re-created with the same UID meanwhile waits until the removal is over. A pod
// whose worker finishes while no source wants it, or that its source removes once finished, is
// handed to the remover at once; housekeeping remains the safety net for orphans (pods left by
// an earlier run, failed removals).
//
// Reading order: loop.go, dispatch.go, housekeeping.go, cleanup.go, remover.go, workqueue.go.
package syncloop
