package printer

import (
	"github.com/rocetap/rocetap/flow"
)

// numericCol marks the sessions table's columns that are a decimal
// number (the MTU's "?" is as wide as 0): the widest cell of one is the
// one of its largest value, so measure keeps that instead of writing
// every cell.
var numericCol = [len(sessionCols)]bool{0: true, 5: true, 6: true, 7: true, 11: true, 12: true, 13: true, 14: true, 15: true, 16: true, 17: true}

// measure widens t's columns to the cells of s (as row writes them),
// keeping the numeric columns' largest values in most. A table of a
// million sessions is measured before it is written, and writing each
// cell twice was a third of the sessions command's report.
func (t *SessionsTable) measure(s *flow.Session, most *[len(sessionCols)]uint64) {
	f := s.Findings()
	for i, v := range [...]uint64{0: uint64(s.ID), 5: s.Packets(), 6: s.Bytes(), 7: s.MessageCount(), 11: uint64(s.MTU),
		12: s.NAKCount(), 13: s.RNRCount(), 14: f.Retransmitted, 15: f.Duplicates, 16: f.OutOfOrder, 17: f.LostPSNs} {
		most[i] = max(most[i], v)
	}
	w := &t.width
	w[1] = max(w[1], runeWidth([]byte(s.Transport)))
	w[2] = max(w[2], runeWidth([]byte(s.Learned.String())))
	b := s.A.AppendTo(t.buf[:0])
	w[3] = max(w[3], runeWidth(b))
	b = s.B.AppendTo(b[:0])
	w[4] = max(w[4], runeWidth(b))
	b = appendRel(b[:0], s.First(), t.start)
	w[8] = max(w[8], runeWidth(b))
	b = appendDur(b[:0], s.Duration())
	w[9] = max(w[9], runeWidth(b))
	b = appendBitRate(b[:0], s.Throughput())
	w[10] = max(w[10], runeWidth(b))
	t.buf = b
}

// decimalWidth returns the digits of v in decimal.
func decimalWidth(v uint64) int {
	n := 1
	for ; v >= 10; v /= 10 {
		n++
	}
	return n
}
