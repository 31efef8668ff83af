package flow

import (
	"encoding/binary"
	"math"
	"math/bits"
	"slices"

	"github.com/rocetap/rocetap/decode"
)

// A session's cells, written and measured cheaply: a sessions table of a
// million QP pairs writes two endpoints a row, and building the
// netip.Addr, unmapping it and writing it a digit at a time was a fifth
// of the row.

// IPv4 returns e's IPv4 address, kept IPv4-mapped (::ffff:a.b.c.d, as
// netip's Unmap reads it); false for an IPv6 address, a GID or a LID.
func (e Endpoint) IPv4() (a [4]byte, ok bool) {
	if !e.hasAddr || binary.LittleEndian.Uint64(e.addr[:8]) != 0 || binary.BigEndian.Uint32(e.addr[8:12]) != 0xffff {
		return a, false
	}
	return [4]byte(e.addr[12:]), true
}

// appendQPN appends "/" and q as hexN(q, 6) formats it: a QPN (24 bits)
// stored at once into room grown once, wider values as appendHexN writes
// them.
func appendQPN(dst []byte, q uint32) []byte {
	if q >= 1<<24 {
		return appendHexN(append(dst, '/'), q, 6)
	}
	const hex = "0123456789abcdef"
	l := len(dst)
	dst = slices.Grow(dst, 9)[:l+9]
	*(*[9]byte)(dst[l:]) = [9]byte{'/', '0', 'x', hex[q>>20], hex[q>>16&0xF], hex[q>>12&0xF], hex[q>>8&0xF], hex[q>>4&0xF], hex[q&0xF]}
	return dst
}

// Width returns the length of what AppendTo appends for e: an IPv4
// endpoint's from its bytes' digits (a sessions table measures two
// endpoints of each of a million sessions before it writes them), the
// others' written.
func (e Endpoint) Width() int {
	a, ok := e.IPv4()
	if !ok {
		var b [64]byte
		return len(e.AppendTo(b[:0]))
	}
	w := 2 // "/?"
	if e.QPNKnown {
		w = 3 + max((bits.Len32(e.QPN)+3)/4, 6) // "/0x" and at least 6 digits
	}
	return w + decode.IPv4Width(a)
}

// appendHexN appends v as hexN formats it: "0x" and at least digits
// digits.
func appendHexN(dst []byte, v uint32, digits int) []byte {
	return decode.AppendHex(dst, uint64(v), digits)
}

// FirstUnixNano returns the time of the session's first packet in Unix
// nanoseconds (First's UnixNano, without making the time.Time).
func (s *Session) FirstUnixNano() int64 { return s.first }

// bitRateUnits are the units AppendBitRate writes a rate in, by
// bitRateClass: the power of 10 it divides by, and the decimals.
var bitRateUnits = [...]struct {
	div  float64
	prec int
	unit string
}{{1, 0, " bit/s"}, {1e3, 2, " kbit/s"}, {1e6, 2, " Mbit/s"}, {1e9, 2, " Gbit/s"}}

// bitRateClass returns the index in bitRateUnits of bps's unit.
func bitRateClass(bps float64) int {
	switch {
	case bps >= 1e9:
		return 3
	case bps >= 1e6:
		return 2
	case bps >= 1e3:
		return 1
	}
	return 0
}

// bitRateUnit returns bps in the unit AppendBitRate writes it in, the
// decimals and the unit.
func bitRateUnit(bps float64) (v float64, prec int, unit string) {
	u := &bitRateUnits[bitRateClass(bps)]
	return bps / u.div, u.prec, u.unit
}

// BitRateMax finds the widest of many rates as AppendBitRate writes
// them, from the largest of each unit: in one unit, a larger rate is
// divided by the same power of 10 and rounded to the same decimals, so
// it is written with as many digits or more. A sessions table measures
// the throughput of each of a million sessions, and measuring each
// (BitRateWidth) was a tenth of sessions' CPU time over stats' at a
// million QP pairs. The zero value holds no rate.
type BitRateMax struct {
	most [len(bitRateUnits)]float64 // by bitRateClass
	seen uint8                      // bit c: a rate of class c
	odd  int                        // the widest negative or infinite rate or NaN, measured ("+Inf Gbit/s" is narrower than 1e12's)
}

// Add gathers bps.
func (m *BitRateMax) Add(bps float64) {
	if math.Signbit(bps) || math.IsNaN(bps) || math.IsInf(bps, 0) {
		m.odd = max(m.odd, BitRateWidth(bps))
		return
	}
	c := bitRateClass(bps)
	m.seen |= 1 << c
	m.most[c] = max(m.most[c], bps)
}

// Width returns the length of the widest rate added (0: none).
func (m *BitRateMax) Width() int {
	w := m.odd
	for c, v := range m.most {
		if m.seen&(1<<c) != 0 {
			w = max(w, BitRateWidth(v))
		}
	}
	return w
}

// BitRateWidth returns the length of what AppendBitRate appends for bps,
// from the rounded number's digits: a sessions table measures the
// throughput of each of a million sessions.
func BitRateWidth(bps float64) int {
	v, prec, unit := bitRateUnit(bps)
	n, ok := fixedRound(v, prec)
	if !ok {
		var b [64]byte
		return len(AppendBitRate(b[:0], bps))
	}
	if prec == 0 {
		return decode.DecimalWidth(n) + len(unit)
	}
	return decode.DecimalWidth(n/100) + 3 + len(unit)
}
