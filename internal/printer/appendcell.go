package printer

import (
	"strconv"
	"time"

	"github.com/rocetap/rocetap/decode"
	"github.com/rocetap/rocetap/flow"
)

// The report's cells appended (and rel and BitRate through them):
// the sessions and stats reports write a row for each of possibly
// millions of sessions, and a string per cell was most of their time.

// appendRel appends t - start in seconds, as rel writes it.
func appendRel(dst []byte, t, start time.Time) []byte {
	return decode.AppendSeconds(dst, int64(t.Sub(start)), 6)
}

// appendDur appends a latency as the reports write it: rounded to 100 ns, as
// time.Duration's String writes it ("0" for 0).
func appendDur(dst []byte, d time.Duration) []byte {
	if d == 0 {
		return append(dst, '0')
	}
	d = d.Round(100 * time.Nanosecond)
	if d <= 0 || d >= time.Second {
		return append(dst, d.String()...)
	}
	// under a second: an integer, up to prec decimals without trailing
	// zeros, and the unit
	v := uint64(d)
	var unit string
	var prec int
	var scale uint64
	switch {
	case v < uint64(time.Microsecond):
		unit, prec, scale = "ns", 0, 1
	case v < uint64(time.Millisecond):
		unit, prec, scale = "µs", 3, 1e3
	default:
		unit, prec, scale = "ms", 6, 1e6
	}
	dst = decode.AppendUint(dst, v/scale)
	if frac := v % scale; frac != 0 {
		var b [6]byte
		n := prec
		for frac%10 == 0 {
			frac /= 10
			n--
		}
		for i := n - 1; i >= 0; i-- {
			b[i] = byte('0' + frac%10)
			frac /= 10
		}
		dst = append(append(dst, '.'), b[:n]...)
	}
	return append(dst, unit...)
}

// appendNotes appends the notes of s, the sessions table's last column ("-"
// for none).
func appendNotes(dst []byte, s *flow.Session) []byte {
	if s.Findings() == noFindings && s.ULP() == nil && s.Merged() == nil {
		// a clean session (most of a million): none of the counts below
		if s.Closed {
			return append(dst, "closed"...)
		}
		return append(dst, '-')
	}
	start := len(dst)
	sep := func() {
		if len(dst) > start {
			dst = append(dst, ", "...)
		}
	}
	f := s.Findings()
	add := func(c uint64, what string) {
		if c == 0 {
			return
		}
		sep()
		dst = strconv.AppendUint(dst, c, 10)
		dst = append(dst, ' ')
		dst = append(dst, what...)
	}
	if u := s.ULP(); u != nil {
		dst = append(dst, u.String()...)
	}
	add(f.Partial, "partial msgs")
	add(f.NoResponse, "unanswered")
	add(f.Unmatched, "unmatched resp")
	add(f.OpcodeSeq, "opcode seq")
	add(f.CNPs, "CNP")
	add(f.ECNCE, "ECN-CE")
	add(f.ICRCErrors, "ICRC err")
	add(f.Truncated, "truncated")
	add(f.MPTViolations, "MPT violations")
	add(f.MPTAccepted, "MPT accepted")
	add(f.MPTRejected, "MPT rejected")
	for i, id := range s.Merged() {
		sep()
		if i == 0 {
			dst = append(dst, "also "...)
		}
		dst = append(dst, '#')
		dst = strconv.AppendUint(dst, uint64(id), 10)
	}
	for side, g := range s.GaveUp() {
		if g.Cause == 0 {
			continue
		}
		sep()
		dst = append(dst, "AB"[side])
		dst = append(dst, " likely in error ("...)
		dst = append(dst, giveUpCause(g.Cause)...)
		dst = append(dst, ')')
	}
	if s.Closed {
		sep()
		dst = append(dst, "closed"...)
	}
	if len(dst) == start {
		dst = append(dst, '-')
	}
	return dst
}
