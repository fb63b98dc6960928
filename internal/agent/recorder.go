package agent

import (
	"k8s.io/utils/clock"

	"github.com/nodelet/nodelet/internal/events"
)

// eventCapacity is the number of events the node keeps for GET /events and `nodelet events`.
const eventCapacity = 1000

// newRecorder returns the event store: the recorder of the runtime (and the prober), which also
// logs each event, and the read-only API's event source.
func newRecorder(clk clock.PassiveClock, nodeName string) *events.Store {
	return events.New(clk, nodeName, eventCapacity)
}
