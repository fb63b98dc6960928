// Package nodeshutdown is upstream's graceful node shutdown: with shutdownGracePeriod (and
// shutdownGracePeriodCriticalPods, or shutdownGracePeriodByPodPriority) set, nodelet takes a
// systemd-logind delay inhibitor at start; when logind announces the shutdown
// (PrepareForShutdown), new pods are refused, the node reports it, and the running pods are
// terminated by priority band, lowest first, each band within its grace period, their
// statuses Failed with reason Terminated; then the inhibitor is released and the host goes
// down.
//
// plan.go holds the decisions, pure and table-tested: the bands (Periods, upstream's
// migrateConfig), the time logind must grant (Budget), which pods go in which band (Groups,
// upstream's groupByPriority) and each pod's grace period.
package nodeshutdown
