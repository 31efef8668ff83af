package pathcmp

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"github.com/rocetap/rocetap/decode"
)

// matcher pairs the copies of every key and classifies what is left.
type matcher struct {
	caps   [2]*Capture
	idx    [2]*index
	flows  []flowKey // by g
	dirs   map[pair]decode.PathDir
	ck     *clock
	window int64

	per   []*flowState // by g
	order []uint32     // flows in order of first appearance
}

type flowState struct {
	dir     decode.PathDir
	matches []match
	delays  []int64
	median  int64
}

// match is one packet seen at both points: indexes upstream and
// downstream, and their times on A's clock.
type match struct {
	up, down   int32
	tUp, tDown int64
}

// upDown returns the upstream and downstream points of a direction.
func upDown(d decode.PathDir) (up, down uint8) {
	if d == decode.PathBToA {
		return B, A
	}
	return A, B
}

// match pairs, key by key, each downstream copy with the latest
// unmatched upstream copy sent before it (at most window earlier), in
// time order: a retransmission that got through pairs with the copy that
// got through, and the earlier copy is the lost one.
func (m *matcher) match() {
	// Flows in order of first appearance, A's first.
	m.per = make([]*flowState, len(m.flows))
	for p := range m.caps {
		for i := range m.caps[p].recs {
			x := &m.caps[p].recs[i]
			if x.ib && m.per[x.g] == nil {
				m.per[x.g] = &flowState{dir: m.dirs[m.flows[x.g].pair()]}
				m.order = append(m.order, x.g)
			}
		}
	}
	keyRuns(m.idx, m.matchKey)
	for _, st := range m.per {
		if st != nil && len(st.delays) > 0 {
			st.median = median64(st.delays)
		}
	}
}

// matchKey matches the copies of key k, runs[p] its frames at point p in
// time order.
func (m *matcher) matchKey(k key, runs [2][]int32) {
	st := m.per[k.g]
	if st.dir == decode.PathDirUnknown {
		return
	}
	up, down := upDown(st.dir)
	cu, cd := m.caps[up], m.caps[down]
	lu, ld := runs[up], runs[down]
	// i: the next unmatched upstream copy; last: the last matched; at:
	// the last sent before the current downstream copy arrived, hi: the
	// last within the clock's tolerance after it (both only move on: a
	// key with many copies, such as a flood of CNPs with PSN 0, takes
	// linear time). The downstream copy pairs with the latest compatible
	// upstream copy sent before it, else with the earliest one sent
	// within the tolerance after it.
	i, last, at, hi := 0, -1, -1, -1
	for _, d := range ld {
		xd := &cd.recs[d]
		td := m.ck.onA(down, xd.t)
		for at+1 < len(lu) && m.ck.onA(up, cu.recs[lu[at+1]].t) <= td {
			at++
		}
		for hi = max(hi, at); hi+1 < len(lu) && m.ck.onA(up, cu.recs[lu[hi+1]].t) <= td+m.ck.tol; {
			hi++
		}
		j := at
		for ; j >= i; j-- {
			if compatible(&cu.recs[lu[j]], xd) {
				break
			}
		}
		if j < i {
			for j = max(i, at+1); j <= hi && !compatible(&cu.recs[lu[j]], xd); j++ {
			}
			if j > hi {
				j = -1
			}
		}
		if j >= i {
			xu := &cu.recs[lu[j]]
			tu := m.ck.onA(up, xu.t)
			if td-tu <= m.window {
				xu.peer, xd.peer = d, lu[j]
				xu.status, xd.status = decode.PathMatched, decode.PathMatched
				xu.delay, xd.delay = td-tu, td-tu
				st.matches = append(st.matches, match{lu[j], d, tu, td})
				st.delays = append(st.delays, td-tu)
				i, last = j+1, j
				continue
			}
		}
		// Not a packet that left upstream before it: a copy of the
		// last one matched (made between the points), or not seen
		// upstream at all.
		if last >= 0 {
			xu := &cu.recs[lu[last]]
			tu := m.ck.onA(up, xu.t)
			if td-tu >= -m.ck.tol && td-tu <= m.window && compatible(xu, xd) {
				xd.status, xd.peer = decode.PathDuplicate, lu[last]
			}
		}
	}
}

// classify labels the frames matching left alone, the reordered ones and
// the NAKed requests.
func (m *matcher) classify() {
	m.markNAKed()
	for p := range m.caps {
		c := m.caps[p]
		for i := range c.recs {
			x := &c.recs[i]
			if !x.ib {
				continue
			}
			st := m.per[x.g]
			if len(st.matches) == 0 {
				x.status, x.dir = decode.PathOffPath, decode.PathDirUnknown
				continue
			}
			x.dir = st.dir
			if x.status != decode.PathNone {
				continue
			}
			up, down := upDown(st.dir)
			other := m.caps[1-p]
			var t int64 // when it would have been seen at the other point, on its clock
			if uint8(p) == up {
				t = m.ck.onA(up, x.t) + st.median
				if down == B {
					t += m.ck.offsetAt(t)
				}
			} else {
				t = m.ck.onA(down, x.t) - st.median
				if up == B {
					t += m.ck.offsetAt(t)
				}
			}
			switch {
			case t < other.first || t > other.last:
				x.status = decode.PathOutside
			case uint8(p) == up:
				x.status = decode.PathLost
			default:
				x.status = decode.PathOnlyHere
			}
		}
	}
	// Reordering: in downstream order, a packet sent upstream before one
	// that arrived ahead of it was overtaken.
	for _, st := range m.per {
		if st == nil || len(st.matches) == 0 {
			continue
		}
		up, down := upDown(st.dir)
		ms := slices.Clone(st.matches)
		slices.SortStableFunc(ms, func(a, b match) int {
			if c := cmp.Compare(a.tDown, b.tDown); c != 0 {
				return c
			}
			return int(a.down - b.down)
		})
		var maxUp int64
		var maxIdx int32 = -1
		for n, x := range ms {
			if n > 0 && (x.tUp < maxUp || x.tUp == maxUp && x.up < maxIdx) {
				m.caps[up].recs[x.up].reordered = true
				m.caps[down].recs[x.down].reordered = true
				continue
			}
			maxUp, maxIdx = x.tUp, x.up
		}
	}
}

// markNAKed marks the requests NAKed: a NAK names the PSN it rejects
// (for a PSN sequence error, the one the responder expected), and
// answers the latest request with that PSN from its destination to its
// source sent before it at the same point; the mark goes on that
// request's copy at the other point too. Only the keys of NAKs are kept.
func (m *matcher) markNAKed() {
	type reqKey struct {
		p   pair // requester → responder
		psn uint32
	}
	for p := range m.caps {
		c := m.caps[p]
		last := map[reqKey]int32{} // the latest request of each NAKed key
		for i := range c.recs {
			if x := &c.recs[i]; x.ib && x.nak {
				f := m.flows[x.g]
				last[reqKey{pair{f.dst, f.src}, x.psn}] = -1
			}
		}
		if len(last) == 0 {
			continue
		}
		for i := range c.recs {
			x := &c.recs[i]
			if !x.ib {
				continue
			}
			f := m.flows[x.g]
			if x.op.IsRequest() {
				k := reqKey{f.pair(), x.psn}
				if _, ok := last[k]; ok {
					last[k] = int32(i)
				}
				continue
			}
			if !x.nak {
				continue
			}
			j := last[reqKey{pair{f.dst, f.src}, x.psn}]
			if j < 0 {
				continue
			}
			q := &c.recs[j]
			if q.t > x.t || x.t-q.t > m.window {
				continue
			}
			q.naked = true
			if q.peer >= 0 && q.status == decode.PathMatched {
				m.caps[1-p].recs[q.peer].naked = true
			}
		}
	}
}

// report builds the per-flow report and the events.
func (m *matcher) report(r *Result, maxEvents int) []*Flow {
	var out []*Flow
	flowOf := make([]*Flow, len(m.flows))
	session := make([][2]uint32, len(m.flows))
	for p := range m.caps {
		for i := range m.caps[p].recs {
			x := &m.caps[p].recs[i]
			if x.ib && session[x.g][p] == 0 {
				session[x.g][p] = x.session
			}
		}
	}
	// A capture has few addresses and many flows between them: each
	// address is written once, its string shared by its flows.
	names := map[addr]string{}
	name := func(a addr) string {
		s, ok := names[a]
		if !ok {
			s = a.String()
			names[a] = s
		}
		return s
	}
	for _, g := range m.order {
		st := m.per[g]
		k := m.flows[g]
		f := &Flow{Src: name(k.src), Dst: name(k.dst), DestQP: k.qp, Dir: decode.PathDirUnknown}
		if s := session[g]; s[A] != 0 {
			f.Session, f.SessionPoint = s[A], A
		} else {
			f.Session, f.SessionPoint = s[B], B
		}
		if len(st.matches) > 0 {
			f.Dir = st.dir
			f.Delay, f.delays = delayStats(st.delays), st.delays
			r.dirDelays[f.Dir] = append(r.dirDelays[f.Dir], st.delays...)
		}
		flowOf[g] = f
		out = append(out, f)
	}
	add := func(e Event) {
		r.EventCounts[e.Name]++
		if r.EventCounts[e.Name] <= maxEvents {
			r.Events = append(r.Events, e)
		}
	}
	// Spike threshold per flow.
	thr := make([]int64, len(m.flows))
	for g, st := range m.per {
		if st == nil || len(st.delays) == 0 {
			continue
		}
		ds := flowOf[g].Delay
		jitter := int64(ds.P90 - ds.Median)
		thr[g] = max(int64(ds.P99)+1, st.median+spikeFactor*jitter, st.median+int64(spikeMin))
	}
	for p := range m.caps {
		c := m.caps[p]
		for i := range c.recs {
			x := &c.recs[i]
			if !x.ib {
				continue
			}
			f := flowOf[x.g]
			up, _ := upDown(f.Dir)
			isUp := uint8(p) == up
			if f.Dir == decode.PathDirUnknown {
				isUp = p == int(A)
			}
			if isUp {
				f.Upstream++
			} else {
				f.Downstream++
			}
			if x.naked && !isUp {
				f.NAKed++
			}
			t := time.Unix(0, x.t).UTC()
			switch x.status {
			case decode.PathMatched:
				if isUp {
					f.Matched++
					if x.reordered {
						f.Reordered++
					}
				} else if x.delay >= thr[x.g] {
					x.spike = true
					f.Spikes++
					add(Event{Name: decode.PathEventDelaySpike, Point: uint8(p), Frame: i + 1, Time: t, Flow: f.Name(),
						Text: fmt.Sprintf("%s %d: one-way delay %s, the flow's median is %s and its p99 %s", x.op, x.psn, fmtDur(time.Duration(x.delay)), fmtDur(f.Delay.Median), fmtDur(f.Delay.P99))})
				}
			case decode.PathLost:
				f.Lost++
				text := fmt.Sprintf("%s %d left %s and never reached %s", x.op, x.psn, PointName(uint8(p)), PointName(uint8(1-p)))
				if x.naked {
					text += "; the responder NAKed it"
				}
				add(Event{Name: decode.PathEventLoss, Point: uint8(p), Frame: i + 1, Time: t, Flow: f.Name(), Text: text})
			case decode.PathDuplicate:
				f.Duplicates++
			case decode.PathOnlyHere:
				f.OnlyDownstream++
			case decode.PathOutside:
				f.Outside++
			}
		}
	}
	slices.SortStableFunc(r.Events, func(a, b Event) int { return cmp.Compare(a.Time.UnixNano(), b.Time.UnixNano()) })
	// By session, A's first; in a session A→B first.
	slices.SortStableFunc(out, func(a, b *Flow) int {
		switch {
		case a.SessionPoint != b.SessionPoint:
			return int(a.SessionPoint) - int(b.SessionPoint)
		case a.Session != b.Session:
			return cmp.Compare(int64(a.Session), int64(b.Session))
		}
		return int(a.Dir) - int(b.Dir)
	})
	return out
}

// PointName names a capture point: "A" or "B".
func PointName(p uint8) string { return [2]string{"A", "B"}[p&1] }

// delayStats summarizes delays (nearest-rank percentiles).
func delayStats(d []int64) DelayStats {
	s := slices.Clone(d)
	slices.Sort(s)
	n := len(s)
	rank := func(q float64) time.Duration {
		i := int(q*float64(n)+0.999999) - 1
		return time.Duration(s[min(max(i, 0), n-1)])
	}
	return DelayStats{N: n, Min: time.Duration(s[0]), Median: rank(0.5), P90: rank(0.9), P99: rank(0.99), Max: time.Duration(s[n-1])}
}

// fmtDur prints a duration in µs with one decimal, or ms/s when larger.
func fmtDur(d time.Duration) string {
	switch a := max(d, -d); {
	case a < time.Millisecond:
		return fmt.Sprintf("%.1fµs", float64(d)/1e3)
	case a < time.Second:
		return fmt.Sprintf("%.3fms", float64(d)/1e6)
	}
	return fmt.Sprintf("%.6fs", d.Seconds())
}
