package crilog

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

func TestJoinerJoinsPartialRecordsPerStream(t *testing.T) {
	var j Joiner
	var got []string
	add := func(at time.Duration, stream string, partial bool, content string) {
		if l, ok := j.Add(Record{Time: t0.Add(at), Stream: stream, Partial: partial, Content: []byte(content)}, true); ok {
			got = append(got, l.Stream+"@"+l.Time.Sub(t0).String()+":"+string(l.Content))
		}
	}
	add(1*time.Second, "stdout", true, "hel")
	add(2*time.Second, "stderr", false, "oops")
	add(3*time.Second, "stdout", true, "lo ")
	add(4*time.Second, "stdout", false, "world")
	add(5*time.Second, "stderr", true, "unfinished")
	want := []string{"stderr@2s:oops\n", "stdout@1s:hello world\n"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("lines %q, want %q", got, want)
	}
	rest := j.Flush()
	if len(rest) != 1 || string(rest[0].Content) != "unfinished" || rest[0].Continued {
		t.Errorf("flush %+v", rest)
	}
	if len(j.Flush()) != 0 {
		t.Error("second flush not empty")
	}
}

func TestJoinerUnterminatedFinalRecord(t *testing.T) {
	var j Joiner
	l, ok := j.Add(Record{Time: t0, Stream: Stdout, Content: []byte("no newline")}, false)
	if !ok || string(l.Content) != "no newline" {
		t.Errorf("got %q, %v; want the content without a newline", l.Content, ok)
	}
}

func TestJoinerFlushOrdersByTime(t *testing.T) {
	var j Joiner
	j.Add(Record{Time: t0.Add(time.Second), Stream: Stdout, Partial: true, Content: []byte("late")}, true)
	j.Add(Record{Time: t0, Stream: Stderr, Partial: true, Content: []byte("early")}, true)
	rest := j.Flush()
	if len(rest) != 2 || string(rest[0].Content) != "early" || string(rest[1].Content) != "late" {
		t.Errorf("flush %+v, want stderr's older line first", rest)
	}
}

func TestJoinerCapsLongLines(t *testing.T) {
	var j Joiner
	big := strings.Repeat("x", MaxLine/2)
	var pieces []Line
	for i := 0; i < 3; i++ {
		if l, ok := j.Add(Record{Time: t0, Stream: "stdout", Partial: true, Content: []byte(big)}, true); ok {
			pieces = append(pieces, l)
		}
	}
	if l, ok := j.Add(Record{Time: t0, Stream: "stdout", Content: []byte("end")}, true); ok {
		pieces = append(pieces, l)
	}
	if len(pieces) != 2 || pieces[0].Continued || !pieces[1].Continued ||
		len(pieces[0].Content) != MaxLine || string(pieces[1].Content) != big+"end\n" {
		t.Fatalf("got %d pieces, want a 1 MiB first piece and the rest of the line", len(pieces))
	}
}

func TestJoinerLinesOutliveLaterRecords(t *testing.T) {
	var j Joiner
	buf := []byte("first")
	l, _ := j.Add(Record{Time: t0, Stream: Stdout, Content: buf}, true)
	copy(buf, "XXXXX")
	l2, _ := j.Add(Record{Time: t0, Stream: Stdout, Content: []byte("second")}, true)
	if string(l.Content) != "first\n" || string(l2.Content) != "second\n" {
		t.Errorf("lines %q %q, want their own copies", l.Content, l2.Content)
	}
}

func TestRing(t *testing.T) {
	line := func(i int) Line { return Line{Content: []byte(fmt.Sprint(i))} }
	contents := func(ls []Line) string {
		var s []string
		for _, l := range ls {
			s = append(s, string(l.Content))
		}
		return strings.Join(s, ",")
	}
	for _, tc := range []struct {
		n, push int
		want    string
	}{
		{0, 3, ""}, {-1, 3, ""}, {3, 0, ""}, {3, 2, "0,1"}, {3, 3, "0,1,2"}, {3, 7, "4,5,6"}, {1, 5, "4"},
	} {
		r := NewRing(int64(tc.n))
		for i := 0; i < tc.push; i++ {
			r.Push(line(i))
		}
		got := r.Lines()
		if contents(got) != tc.want {
			t.Errorf("ring of %d after %d pushes: %q, want %q", tc.n, tc.push, contents(got), tc.want)
		}
		if len(got) > 0 {
			got[0] = line(99) // a new slice: the ring is unchanged
			if contents(r.Lines()) != tc.want {
				t.Errorf("ring of %d: Lines shares the ring's storage", tc.n)
			}
		}
	}
}
