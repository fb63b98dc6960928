package server

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// logOptions are the kubelet's v1.PodLogOptions as the log reader uses them
// (k8s.io/cri-client/pkg/logs NewLogOptions): -1 means no limit, a zero since means all.
type logOptions struct {
	follow     bool
	previous   bool
	timestamps bool
	tail       int64     // lines to show from the end; -1: all
	limitBytes int64     // bytes to write at most; -1: no limit
	since      time.Time // lines older than this are skipped
	stream     string    // "stdout" or "stderr"; "": both
}

// parseLogOptions decodes the query of GET /containerLogs as the kubelet does (the v1
// PodLogOptions parameter codec, the legacy "tail" parameter, ValidatePodLogOptions) and turns
// sinceSeconds into a time with now. Unknown parameters are ignored, as upstream.
func parseLogOptions(q url.Values, now time.Time) (logOptions, error) {
	o := logOptions{tail: -1, limitBytes: -1}
	o.follow = queryBool(q, "follow")
	o.previous = queryBool(q, "previous")
	o.timestamps = queryBool(q, "timestamps")

	// "tail" is the kubelet's backwards-compatible alias of tailLines; "all" means no tail.
	if tail, ok := q["tail"]; ok && len(tail) > 0 && tail[0] != "" {
		q = cloneValues(q)
		if tail[0] == "all" {
			delete(q, "tailLines")
		} else {
			q["tailLines"] = tail[:1]
		}
	}
	tail, hasTail, err := queryInt(q, "tailLines")
	if err != nil {
		return o, err
	}
	if hasTail {
		if tail < 0 {
			return o, fmt.Errorf("invalid tailLines %d: must be greater than or equal to 0", tail)
		}
		o.tail = tail
	}
	limit, hasLimit, err := queryInt(q, "limitBytes")
	if err != nil {
		return o, err
	}
	if hasLimit {
		if limit < 1 {
			return o, fmt.Errorf("invalid limitBytes %d: must be greater than 0", limit)
		}
		o.limitBytes = limit
	}
	seconds, hasSeconds, err := queryInt(q, "sinceSeconds")
	if err != nil {
		return o, err
	}
	var sinceTime metav1.Time
	hasSinceTime := len(q["sinceTime"]) > 0
	if hasSinceTime {
		if err := sinceTime.UnmarshalQueryParameter(q["sinceTime"][0]); err != nil {
			return o, fmt.Errorf("invalid sinceTime %q: must be an RFC 3339 time such as 2006-01-02T15:04:05Z", q["sinceTime"][0])
		}
	}
	if hasSeconds && hasSinceTime {
		return o, fmt.Errorf("at most one of sinceTime or sinceSeconds may be specified")
	}
	if hasSeconds {
		if seconds < 1 {
			return o, fmt.Errorf("invalid sinceSeconds %d: must be greater than 0", seconds)
		}
		o.since = now.Add(-time.Duration(seconds) * time.Second)
	}
	if hasSinceTime {
		o.since = sinceTime.Time
	}

	if s := q["stream"]; len(s) > 0 {
		switch s[0] {
		case v1.LogStreamAll:
		case v1.LogStreamStdout:
			o.stream = "stdout"
		case v1.LogStreamStderr:
			o.stream = "stderr"
		default:
			return o, fmt.Errorf("invalid stream %q: must be one of %s, %s, %s", s[0], v1.LogStreamAll, v1.LogStreamStdout, v1.LogStreamStderr)
		}
		if o.stream != "" && hasTail {
			return o, fmt.Errorf("tailLines cannot be combined with stream %q", s[0])
		}
	}
	return o, nil
}

// queryBool decodes a boolean parameter as apimachinery's Convert_Slice_string_To_bool: absent,
// "0" and "false" (any case) are false; anything else, even an empty value, is true.
func queryBool(q url.Values, name string) bool {
	v, ok := q[name]
	if !ok || len(v) == 0 {
		return false
	}
	return v[0] != "0" && !strings.EqualFold(v[0], "false")
}

// queryInt decodes an int64 parameter; ok tells whether it was given.
func queryInt(q url.Values, name string) (n int64, ok bool, err error) {
	v, ok := q[name]
	if !ok || len(v) == 0 {
		return 0, false, nil
	}
	n, err = strconv.ParseInt(v[0], 10, 64)
	if err != nil {
		return 0, true, fmt.Errorf("invalid %s %q: must be an integer", name, v[0])
	}
	return n, true, nil
}

func cloneValues(q url.Values) url.Values {
	c := make(url.Values, len(q))
	for k, v := range q {
		c[k] = v
	}
	return c
}
