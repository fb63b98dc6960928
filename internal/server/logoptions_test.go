package server

import (
	"net/url"
	"strings"
	"testing"
	"time"
)

func TestParseLogOptions(t *testing.T) {
	cases := []struct {
		query string
		want  logOptions
		err   string
	}{
		{query: "", want: logOptions{tail: -1, limitBytes: -1}},
		{query: "follow=true&previous=1&timestamps", want: logOptions{follow: true, previous: true, timestamps: true, tail: -1, limitBytes: -1}},
		{query: "follow=false&previous=0&timestamps=FALSE", want: logOptions{tail: -1, limitBytes: -1}},
		{query: "tailLines=5&limitBytes=100", want: logOptions{tail: 5, limitBytes: 100}},
		{query: "tailLines=0", want: logOptions{tail: 0, limitBytes: -1}},
		{query: "tail=3", want: logOptions{tail: 3, limitBytes: -1}},
		{query: "tail=all&tailLines=3", want: logOptions{tail: -1, limitBytes: -1}},
		{query: "tail=2&tailLines=3", want: logOptions{tail: 2, limitBytes: -1}},
		{query: "sinceSeconds=60", want: logOptions{tail: -1, limitBytes: -1, since: t0.Add(-time.Minute)}},
		{query: "sinceTime=2026-03-01T11:00:00Z", want: logOptions{tail: -1, limitBytes: -1, since: t0.Add(-time.Hour)}},
		{query: "stream=Stderr", want: logOptions{tail: -1, limitBytes: -1, stream: "stderr"}},
		{query: "stream=All&tailLines=1", want: logOptions{tail: 1, limitBytes: -1}},
		{query: "tailLines=-1", err: "invalid tailLines -1"},
		{query: "tailLines=x", err: `invalid tailLines "x": must be an integer`},
		{query: "tailLines=", err: "invalid tailLines"},
		{query: "limitBytes=0", err: "invalid limitBytes 0: must be greater than 0"},
		{query: "sinceSeconds=0", err: "invalid sinceSeconds 0"},
		{query: "sinceTime=yesterday", err: `invalid sinceTime "yesterday"`},
		{query: "sinceSeconds=1&sinceTime=2026-03-01T11:00:00Z", err: "at most one of sinceTime or sinceSeconds"},
		{query: "stream=stdout", err: `invalid stream "stdout"`},
		{query: "stream=Stdout&tailLines=1", err: "tailLines cannot be combined"},
	}
	for _, tc := range cases {
		t.Run(tc.query, func(t *testing.T) {
			q, err := url.ParseQuery(tc.query)
			if err != nil {
				t.Fatal(err)
			}
			got, err := parseLogOptions(q, t0)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !got.since.Equal(tc.want.since) {
				t.Errorf("since %v, want %v", got.since, tc.want.since)
			}
			got.since, tc.want.since = time.Time{}, time.Time{}
			if got != tc.want {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}
