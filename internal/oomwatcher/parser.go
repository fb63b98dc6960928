package oomwatcher

import (
	"errors"
	"fmt"
	"path"
	"regexp"
	"strconv"
	"time"
)

// Upstream's (cadvisor's) regular expressions.
var (
	firstLineRegexp = regexp.MustCompile(`invoked oom-killer:`)
	// Kernels since 4.19 (upstream: "starting in 5.0").
	containerRegexp       = regexp.MustCompile(`oom-kill:constraint=(.*),nodemask=(.*),cpuset=(.*),mems_allowed=(.*),oom_memcg=(.*),task_memcg=(.*),task=(.*),pid=(.*),uid=(.*)`)
	legacyContainerRegexp = regexp.MustCompile(`Task in (.*) killed as a result of limit of (.*)`)
	lastLineRegexp        = regexp.MustCompile(`Killed process ([0-9]+) \((.+)\)`)
)

// RootCgroup is the VictimContainerName of a system OOM: no memory cgroup's limit was hit.
const RootCgroup = "/"

// Event is one OOM kill (upstream's OomInstance).
type Event struct {
	// TimeOfDeath is the time of the record that finished the kill's report.
	TimeOfDeath time.Time
	// Pid and ProcessName are the killed process's.
	Pid         int
	ProcessName string
	// ContainerName is the killed process's memory cgroup (task_memcg); "/" when unknown.
	ContainerName string
	// VictimContainerName is the memory cgroup whose limit was hit (oom_memcg): "/" for a
	// system OOM.
	VictimContainerName string
	// Constraint is the OOM's constraint (CONSTRAINT_NONE, CONSTRAINT_MEMCG...), when printed.
	Constraint string
}

// Parser turns kernel log records into OOM events, as upstream's StreamOoms: after a
// "invoked oom-killer:" record every record is read for the cgroups, the pid and the name
// until the oom-kill line or the "Killed process" line finishes the event. It does no I/O.
type Parser struct {
	bootTime time.Time
	current  *Event
}

// NewParser returns a parser giving records the wall time bootTime + their time since boot.
func NewParser(bootTime time.Time) *Parser { return &Parser{bootTime: bootTime} }

// Feed takes the next record. It returns the event the record finishes, if any; err reports
// a pid that is not a number (the event goes on, as upstream's).
func (p *Parser) Feed(r Record) (ev Event, done bool, err error) {
	if p.current == nil {
		if firstLineRegexp.MatchString(r.Message) {
			p.current = &Event{ContainerName: RootCgroup, VictimContainerName: RootCgroup, TimeOfDeath: p.time(r)}
		}
		return Event{}, false, nil
	}
	done, err = fillContainer(r.Message, p.current)
	if !done {
		var perr error
		done, perr = fillProcess(r.Message, p.current)
		err = errors.Join(err, perr)
	}
	if !done {
		return Event{}, false, err
	}
	ev = *p.current
	ev.TimeOfDeath = p.time(r)
	p.current = nil
	return ev, true, err
}

func (p *Parser) time(r Record) time.Time { return p.bootTime.Add(r.SinceBoot) }

// Parse is the events of a run of /dev/kmsg record lines (malformed lines skipped).
func Parse(bootTime time.Time, lines []string) []Event {
	p := NewParser(bootTime)
	var out []Event
	for _, l := range lines {
		r, err := ParseRecord(l)
		if err != nil {
			continue
		}
		if ev, done, _ := p.Feed(r); done {
			out = append(out, ev)
		}
	}
	return out
}

// fillContainer reads the cgroups from the oom-kill line (which finishes the event with the
// pid and the name) or the legacy "Task in" line.
func fillContainer(line string, ev *Event) (bool, error) {
	m := containerRegexp.FindStringSubmatch(line)
	if m == nil {
		if m := legacyContainerRegexp.FindStringSubmatch(line); m != nil {
			ev.ContainerName = path.Join("/", m[1])
			ev.VictimContainerName = path.Join("/", m[2])
		}
		return false, nil
	}
	ev.ContainerName, ev.VictimContainerName, ev.Constraint = m[6], m[5], m[1]
	pid, err := strconv.Atoi(m[8])
	if err != nil {
		return false, fmt.Errorf("oom-kill line's pid %q: %w", m[8], err)
	}
	ev.Pid, ev.ProcessName = pid, m[7]
	return true, nil
}

// fillProcess reads the "Killed process <pid> (<name>)" line, which finishes the event.
func fillProcess(line string, ev *Event) (bool, error) {
	m := lastLineRegexp.FindStringSubmatch(line)
	if m == nil {
		return false, nil
	}
	pid, err := strconv.Atoi(m[1])
	if err != nil {
		return false, fmt.Errorf("killed process's pid %q: %w", m[1], err)
	}
	ev.Pid, ev.ProcessName = pid, m[2]
	return true, nil
}
