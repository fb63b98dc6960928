package agent

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/nodelet/nodelet/internal/podconfig"
)

type fakeReporter struct{ reports []string }

func (f *fakeReporter) Report(source, origin string, err error) {
	f.reports = append(f.reports, source+" "+origin+": "+err.Error())
}

type fakeNodeEvents struct{ events []string }

func (f *fakeNodeEvents) NodeEventf(eventType, reason, messageFmt string, args ...any) {
	f.events = append(f.events, eventType+" "+reason+" "+fmt.Sprintf(messageFmt, args...))
}

var (
	_ podconfig.Reporter = (*fakeReporter)(nil)
	_ nodeEventRecorder  = (*fakeNodeEvents)(nil)
)

// A rejected manifest reaches the log's reporter and becomes a node event naming the file and
// the field.
func TestRejectedManifestIsANodeEvent(t *testing.T) {
	next, rec := &fakeReporter{}, &fakeNodeEvents{}
	r := eventReporter{next: next, recorder: rec}
	r.Report(podconfig.FileSource, "/etc/kubernetes/manifests/web.yaml", errors.New(`unknown field "spec.containers[0].imagee"`))
	if len(next.reports) != 1 {
		t.Errorf("the log's reporter got %v", next.reports)
	}
	if len(rec.events) != 1 || !strings.HasPrefix(rec.events[0], "Warning ManifestRejected file pod manifest /etc/kubernetes/manifests/web.yaml rejected") ||
		!strings.Contains(rec.events[0], `spec.containers[0].imagee`) {
		t.Errorf("node events %v", rec.events)
	}
}
