package printer

import (
	"time"

	"github.com/rocetap/rocetap/decode"
	"github.com/rocetap/rocetap/flow"
)

// numericCol marks the sessions table's columns that are a decimal
// number (the MTU's "?" is as wide as 0): the widest cell of one is the
// one of its largest value, so measure keeps that instead of writing
// every cell.
var numericCol = [len(sessionCols)]bool{0: true, 5: true, 6: true, 7: true, 11: true, 12: true, 13: true, 14: true, 15: true, 16: true, 17: true}

// sessionMeasure is what the columns' widths are taken from, gathered in
// one pass over the sessions: a table of a million sessions is measured
// before it is written, and writing every cell twice (then measuring
// them) was 40% of the table's cost.
type sessionMeasure struct {
	most [len(sessionCols)]uint64 // the numeric columns' largest values
	// the earliest and latest first packets (Unix ns): a Start cell is
	// the wider the farther its time is from the start, before or after
	firstMin, firstMax int64
	pairings           uint64 // bit p: a session paired by p (p < 64)
	rate               flow.BitRateMax
	buf                []byte // scratch for the cells measured as written
}

// noFindings is what Session.Findings returns for a session without
// any (its counts all 0, its notes none): a clean session's cells that
// come from findings are written without reading them.
var noFindings = new(flow.Session).Findings()

// measure widens t's columns to the cells of s (as row writes them).
func (t *SessionsTable) measure(s *flow.Session, m *sessionMeasure) {
	m.most[0] = max(m.most[0], uint64(s.ID))
	m.most[5] = max(m.most[5], s.Packets())
	m.most[6] = max(m.most[6], s.Bytes())
	m.most[7] = max(m.most[7], s.MessageCount())
	m.most[11] = max(m.most[11], uint64(s.MTU))
	if f := s.Findings(); f != noFindings {
		for i, v := range [...]uint64{12: f.NAKCount(), 13: f.RNRCount(), 14: f.Retransmitted, 15: f.Duplicates, 16: f.OutOfOrder, 17: f.LostPSNs} {
			m.most[i] = max(m.most[i], v)
		}
	}
	w := &t.width
	w[1] = max(w[1], len(s.Transport.String()))
	if p := s.Learned; p < 64 {
		m.pairings |= 1 << p
	} else {
		w[2] = max(w[2], len(p.String()))
	}
	w[3] = max(w[3], s.A.Width())
	w[4] = max(w[4], s.B.Width())
	first := s.FirstUnixNano()
	m.firstMin, m.firstMax = min(m.firstMin, first), max(m.firstMax, first)
	w[9] = max(w[9], m.durWidth(s.Duration()))
	m.rate.Add(s.Throughput())
}

// finish sets t's widths from what m gathered.
func (t *SessionsTable) finish(m *sessionMeasure) {
	for i, v := range m.most {
		if numericCol[i] {
			t.width[i] = max(t.width[i], decode.DecimalWidth(v))
		}
	}
	t.width[10] = max(t.width[10], m.rate.Width())
	for p := range 64 {
		if m.pairings&(1<<p) != 0 {
			t.width[2] = max(t.width[2], len(decode.Pairing(p).String()))
		}
	}
	if t.n > 0 {
		for _, ns := range [...]int64{m.firstMin, m.firstMax} {
			t.width[8] = max(t.width[8], len(t.start.appendRel(m.buf[:0], ns)))
		}
	}
}

// startClock writes times from start as appendRel does, from Unix
// nanoseconds where their difference is t.Sub(start) (start has Unix
// nanoseconds, and the difference does not overflow): Sub's check for
// saturation (an Add and an Equal) was a tenth of a sessions table row.
type startClock struct {
	start time.Time
	ns    int64
	exact bool // start is ns
}

func newStartClock(start time.Time) startClock {
	ns := start.UnixNano()
	return startClock{start, ns, time.Unix(0, ns).Equal(start)}
}

// appendRel appends the time ns (Unix nanoseconds) from c's start.
func (c *startClock) appendRel(dst []byte, ns int64) []byte {
	d := ns - c.ns
	if !c.exact || (ns >= c.ns) != (d >= 0) {
		return appendRel(dst, time.Unix(0, ns), c.start)
	}
	return decode.AppendSeconds(dst, d, 6)
}

// durWidth returns the width in runes of appendDur's d, from the digits
// of its rounded value (under a second: the common case, written
// otherwise).
func (m *sessionMeasure) durWidth(d time.Duration) int {
	r := d.Round(100 * time.Nanosecond)
	if d == 0 || r <= 0 || r >= time.Second {
		m.buf = appendDur(m.buf[:0], d)
		return runeWidth(m.buf)
	}
	v := uint64(r)
	switch {
	case v < 1e3:
		return decode.DecimalWidth(v) + 2 // "ns"
	case v < 1e6:
		return decode.DecimalWidth(v/1e3) + fracWidth(v%1e3, 3) + 2 // "µs"
	}
	return decode.DecimalWidth(v/1e6) + fracWidth(v%1e6, 6) + 2 // "ms"
}

// fracWidth returns the width of frac's prec decimals as appendDur writes
// them: a point and the digits but trailing zeros, nothing for none.
func fracWidth(frac uint64, prec int) int {
	if frac == 0 {
		return 0
	}
	for frac%10 == 0 {
		frac /= 10
		prec--
	}
	return 1 + prec
}
