// Package pleg is nodelet's pod lifecycle event generator (PLEG) and pod status cache, modelled on
// upstream's generic (relisting) PLEG in pkg/kubelet/pleg and the cache in pkg/kubelet/container.
//
// Every relist period Generic lists the runtime's pods and containers (Runtime.GetPods), compares
// the listing with the previous one (Diff), inspects each pod in which a container or sandbox
// changed state (Runtime.GetPodStatus), stores the result in the Cache stamped with the time taken
// before the listing, advances the Cache's global timestamp, and sends the pod's lifecycle events
// on the channel returned by Watch.
//
// Pod workers read the Cache with GetNewerThan: a status at least as fresh as their last sync,
// which is what makes the events only hints ("look at this pod again") and the cache the source
// of truth. Healthy reports whether relisting still succeeds, as the kubelet's PLEG health check.
//
// # Evented
//
// Evented adds the runtime's container event stream (CRI GetContainerEvents) on top of Generic's
// relisting. An event only says "look at this pod": the pod it names is inspected afresh and the
// events sent are the Diff between the pod's last delivered listing and the inspection's, exactly
// as a relist would compute them. Events arriving while the loop is busy are coalesced per pod.
// While the stream is up, a full relist runs only every SafetyRelistPeriod (5 min) as a safety
// net. When the runtime does not serve the stream (Unimplemented: containerd before 1.7; tried
// again every UnsupportedRetry) or the stream breaks (reopened after a back-off of 1 s doubling
// to 30 s), it relists every RelistPeriod (1 s), at once if the stream was up; a reopened stream is
// trusted only after a relist that started one RelistPeriod after it opened has caught up with
// what happened while it was down (the runtime subscribes only once our request reaches it).
//
// # Why a worker never syncs on a status older than its last sync
//
// Upstream's evented PLEG (KEP-3386) was pulled back after it made the kubelet create duplicate
// containers (kubernetes#121003, #121349): the cache received statuses stamped with the event's
// creation time, and its global timestamp was advanced every second to the current time, so a
// worker waiting for a view newer than its last sync could be handed one taken before that sync,
// without the container it had just created, and create it again. Here:
//
//   - Every cache entry is stamped with a clock reading taken before the runtime inspection that
//     produced it, never with anything from an event. An entry newer than a worker's last sync
//     therefore comes from an inspection that started after the sync returned, and shows all it
//     did. Cache.Set refuses an entry older than the one it holds, so the cache never goes back.
//   - The global timestamp ("every entry, and every absence, is at least this fresh") moves only
//     after a full relist, to the time taken before its listing. Events never move it: the stream
//     has no sequence numbers and no barrier, so nothing proves that every change made before a
//     given instant has been delivered — an event may still be in flight, and after a break some
//     are lost.
//   - With the global timestamp moving only every few minutes, a worker whose sync changed nothing
//     (so no event follows) would wait that long. Instead the cache tells Evented which pods
//     workers wait on (Cache.Waits, Cache.Waiting), and Evented inspects them on demand; the
//     inspection starts after the wait began, so it answers the wait truthfully.
//
// So correctness never depends on the stream: events that are late, duplicated, reordered or lost
// change only how soon a change is noticed, never what a worker is shown.
package pleg
