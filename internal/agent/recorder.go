package agent

import (
	v1 "k8s.io/api/core/v1"
	"k8s.io/utils/clock"

	"github.com/nodelet/nodelet/internal/events"
	"github.com/nodelet/nodelet/internal/podconfig"
)

// eventCapacity is the number of events the node keeps for GET /events and `nodelet events`.
const eventCapacity = 1000

// newRecorder returns the event store: the recorder of the runtime (and the prober), which also
// logs each event, and the read-only API's event source.
func newRecorder(clk clock.PassiveClock, nodeName string) *events.Store {
	return events.New(clk, nodeName, eventCapacity)
}

// nodeEventRecorder records events about the node (teeRecorder).
type nodeEventRecorder interface {
	NodeEventf(eventType, reason, messageFmt string, args ...any)
}

// eventReporter reports a rejected manifest to next (the log) and as a Warning node event
// ManifestRejected naming the source, the file or URL and the field, so that `nodelet events`
// (and, on a cluster node, `kubectl get events`) shows what the log says.
type eventReporter struct {
	next     podconfig.Reporter
	recorder nodeEventRecorder
}

var _ podconfig.Reporter = eventReporter{}

func (r eventReporter) Report(source, origin string, err error) {
	r.next.Report(source, origin, err)
	r.recorder.NodeEventf(v1.EventTypeWarning, "ManifestRejected", "%s pod manifest %s rejected; fix it and nodelet picks the change up: %v", source, origin, err)
}
