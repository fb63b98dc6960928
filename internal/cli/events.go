package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	v1 "k8s.io/api/core/v1"
)

// eventsTimeout bounds GET /events.
const eventsTimeout = 30 * time.Second

// `nodelet events [POD] [-n NAMESPACE | -A]` lists the events nodelet recorded (GET /events,
// internal/events) in `kubectl get events`'s table: LAST SEEN, TYPE, REASON, OBJECT, MESSAGE,
// NAMESPACE first with -A. The cells are kubectl's printEvent (pkg/printers/internalversion):
// LAST SEEN is HumanDuration(now - lastTimestamp), falling back to firstTimestamp, then to
// eventTime, measured with the injected clock; OBJECT is the lower-cased kind and the name
// ("pod/web"); MESSAGE is trimmed. As in kubectl's table printer, a cell is cut at its first
// newline, carriage return or form feed, which becomes "...", and ESC is shown as "^[". There
// is no "(xN over D)": that is `kubectl events` and `kubectl describe`, not `kubectl get events`.
//
// Unlike `kubectl get events`, which prints in the API server's order (by name), the rows are
// sorted by last seen, oldest first, as `kubectl events` sorts them. POD (or pod/POD) keeps the
// events of that pod, as --field-selector involvedObject.name=POD would; the pod need not exist
// any more, its events outlive it. No events prints kubectl's "No resources found in NS
// namespace." to errOut, with exit code 0.
func (c *command) events(ctx context.Context, args []string) int {
	var server, namespace string
	var allNamespaces bool
	fs := newFlagSet("events", &server)
	fs.StringVarP(&namespace, "namespace", "n", "default", "namespace of the events")
	fs.BoolVarP(&allNamespaces, "all-namespaces", "A", false, "list the events of all namespaces")
	if code, done := c.parse(fs, args); done {
		return code
	}
	query := url.Values{}
	switch rest := fs.Args(); {
	case len(rest) > 1:
		return c.usageError("expected at most one POD, got %q", rest)
	case len(rest) == 1:
		podName := rest[0]
		if name, ok := strings.CutPrefix(podName, "pod/"); ok {
			podName = name
		} else if name, ok := strings.CutPrefix(podName, "pods/"); ok {
			podName = name
		}
		if podName == "" {
			return c.usageError("POD must not be empty")
		}
		query.Set("pod", podName)
	}
	if !allNamespaces {
		query.Set("namespace", namespace)
	}

	events, err := c.listEvents(ctx, server, query)
	if err != nil {
		return c.report(err)
	}
	if len(events) == 0 {
		if allNamespaces {
			fmt.Fprintln(c.errOut, "No resources found")
		} else {
			fmt.Fprintf(c.errOut, "No resources found in %s namespace.\n", namespace)
		}
		return exitOK
	}
	slices.SortStableFunc(events, func(a, b v1.Event) int { return eventTime(&a).Compare(eventTime(&b)) })
	if err := printEventTable(c.out, events, allNamespaces, c.clock.Now()); err != nil {
		return c.fail("%v", err)
	}
	return exitOK
}

// listEvents fetches GET /events with query.
func (c *command) listEvents(ctx context.Context, server string, query url.Values) ([]v1.Event, error) {
	target, err := endpoint(server, "/events", query)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, eventsTimeout)
	defer cancel()
	resp, err := c.get(ctx, server, target)
	if err != nil {
		return nil, err
	}
	defer func() { _ = resp.Body.Close() }()
	var list v1.EventList
	if err := json.NewDecoder(resp.Body).Decode(&list); err != nil {
		return nil, fmt.Errorf("decode the event list from %s: %w", target, err)
	}
	return list.Items, nil
}

// eventTime is when an event was last seen, as `kubectl events` sorts them (SortableEvents).
func eventTime(e *v1.Event) time.Time {
	if e.Series != nil {
		return e.Series.LastObservedTime.Time
	}
	if !e.LastTimestamp.IsZero() {
		return e.LastTimestamp.Time
	}
	return e.EventTime.Time
}

// printEventTable prints events as `kubectl get events` does, with the tabwriter settings of
// printPodTable.
func printEventTable(out io.Writer, events []v1.Event, withNamespace bool, now time.Time) error {
	tw := tabwriter.NewWriter(out, 6, 4, 3, ' ', 0)
	header := []string{"LAST SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE"}
	if withNamespace {
		header = append([]string{"NAMESPACE"}, header...)
	}
	fmt.Fprintln(tw, strings.Join(header, "\t"))
	for i := range events {
		cells := eventRow(&events[i], now)
		if withNamespace {
			cells = append([]string{events[i].Namespace}, cells...)
		}
		for j := range cells {
			cells[j] = tableCell(cells[j])
		}
		fmt.Fprintln(tw, strings.Join(cells, "\t"))
	}
	return tw.Flush()
}

// eventRow is kubectl's printEvent without the wide columns: LAST SEEN, TYPE, REASON, OBJECT,
// MESSAGE.
func eventRow(e *v1.Event, now time.Time) []string {
	firstTimestamp := translateTimestampSince(e.FirstTimestamp.Time, now)
	if e.FirstTimestamp.IsZero() {
		firstTimestamp = translateTimestampSince(e.EventTime.Time, now)
	}
	lastTimestamp := translateTimestampSince(e.LastTimestamp.Time, now)
	if e.LastTimestamp.IsZero() {
		lastTimestamp = firstTimestamp
	}
	if e.Series != nil {
		lastTimestamp = translateTimestampSince(e.Series.LastObservedTime.Time, now)
	}
	target := strings.ToLower(e.InvolvedObject.Kind)
	if e.InvolvedObject.Name != "" {
		target += "/" + e.InvolvedObject.Name
	}
	return []string{lastTimestamp, e.Type, e.Reason, target, strings.TrimSpace(e.Message)}
}

// cellBreakChars end a cell in kubectl's table printer; the tabwriter would take them for line
// ends.
const cellBreakChars = "\f\n\r"

// tableCell is a cell as kubectl's table printer writes it (appendCellValue, WriteEscaped): cut
// at the first break character with "..." appended, ESC escaped as "^[".
func tableCell(s string) string {
	suffix := ""
	if i := strings.IndexAny(s, cellBreakChars); i >= 0 {
		s, suffix = s[:i], "..."
	}
	return strings.ReplaceAll(s, "\x1b", "^[") + suffix
}
