package flow

import "github.com/rocetap/rocetap/decode"

// ExpertLog collects expert events grouped by kind, keeping at most
// MaxPerKind of each (the rest are counted), so its memory is bounded
// however many events a capture has.
type ExpertLog struct {
	MaxPerKind int // 0 means 1000
	counts     [decode.NumEvents]uint64
	events     [decode.NumEvents][]Event
}

// ExpertGroup is the events of one kind.
type ExpertGroup struct {
	Kind     decode.Event
	Name     string // as in rocetap.analysis.<name>
	Severity decode.Severity
	Summary  string
	Count    uint64  // all events of the kind
	Events   []Event // the first MaxPerKind, in capture order
}

// Add records an event (a copy of it).
func (l *ExpertLog) Add(e *Event) {
	max := l.MaxPerKind
	if max == 0 {
		max = 1000
	}
	for i := range decode.NumEvents {
		if e.Kind == 1<<i {
			l.counts[i]++
			if len(l.events[i]) < max {
				l.events[i] = append(l.events[i], *e)
			}
			return
		}
	}
}

// Resolve rewrites the session of every event recorded with f (a
// Tracker's Resolve: a provisional session's ID becomes that of the
// session it merged into).
func (l *ExpertLog) Resolve(f func(uint32) uint32) {
	for i := range l.events {
		for j := range l.events[i] {
			e := &l.events[i][j]
			e.Session = f(e.Session)
		}
	}
}

// Total returns the number of events recorded.
func (l *ExpertLog) Total() uint64 {
	var n uint64
	for _, c := range l.counts {
		n += c
	}
	return n
}

// Groups returns the kinds that occurred, most severe first, then in the
// order of the decode.Event constants.
func (l *ExpertLog) Groups() []ExpertGroup {
	var out []ExpertGroup
	for sev := decode.SevError; ; sev-- {
		for i := range decode.NumEvents {
			if l.counts[i] == 0 {
				continue
			}
			k := decode.Event(1) << i
			name, s, summary := decode.EventInfo(k)
			if s != sev {
				continue
			}
			out = append(out, ExpertGroup{Kind: k, Name: name, Severity: s, Summary: summary, Count: l.counts[i], Events: l.events[i]})
		}
		if sev == decode.SevChat {
			break
		}
	}
	return out
}
