// Package syncloop is nodelet's main loop: one select over config updates, PLEG events, a 1 s
// sync tick (pods whose next sync is due in the work queue), a 2 s housekeeping tick, and probe
// results; each case hands off to the Dispatcher, which updates the desired pods and asks the
// pod workers to act. While the runtime is not ready the loop backs off, 100 ms doubling to 5 s,
// and says why.
//
// Reading order: loop.go, dispatch.go, housekeeping.go, workqueue.go.
package syncloop
