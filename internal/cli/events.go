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
// internal/events) as `kubectl events` does (pkg/cmd/events): LAST SEEN, TYPE, REASON, OBJECT,
// MESSAGE, NAMESPACE first with -A, sorted by last seen, oldest first. LAST SEEN is the time
// since the event was last seen, with "(xN over D)" when it was seen N times, the first D ago
// ("85s (x9 over 3m)"); OBJECT is the kind and the name ("Pod/web"); MESSAGE is trimmed. Times
// are measured with the injected clock. As in kubectl's table printer, a cell is cut at its
// first newline, carriage return or form feed, which becomes "...", and ESC is shown as "^[".
// POD (or pod/POD) keeps the events of that pod, as --for pod/POD would; the pod need not
// exist any more, its events outlive it. No events prints kubectl's "No resources found in NS
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

// printEventTable prints events as `kubectl events` does, with the tabwriter settings of
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

// eventRow is `kubectl events`'s row (its EventPrinter.printOneEvent and getInterval): LAST
// SEEN, with "(xN over D)" for an event seen N times since D ago; TYPE; REASON; OBJECT as
// Kind/name; MESSAGE.
func eventRow(e *v1.Event, now time.Time) []string {
	first := translateTimestampSince(e.EventTime.Time, now)
	if e.EventTime.IsZero() {
		first = translateTimestampSince(e.FirstTimestamp.Time, now)
	}
	interval := first
	switch {
	case e.Series != nil:
		interval = fmt.Sprintf("%s (x%d over %s)", translateTimestampSince(e.Series.LastObservedTime.Time, now), e.Series.Count, first)
	case e.Count > 1:
		interval = fmt.Sprintf("%s (x%d over %s)", translateTimestampSince(e.LastTimestamp.Time, now), e.Count, first)
	}
	return []string{interval, e.Type, e.Reason, e.InvolvedObject.Kind + "/" + e.InvolvedObject.Name, strings.TrimSpace(e.Message)}
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
