package flow

import (
	"encoding/binary"
	"slices"
	"strconv"

	"github.com/rocetap/rocetap/decode"
)

// An endpoint written without netip.Addr: a sessions table of a million
// QP pairs writes two endpoints a row, and building the Addr, unmapping
// it and writing it a digit at a time was a fifth of the row.

// IPv4 returns e's IPv4 address, kept IPv4-mapped (::ffff:a.b.c.d, as
// netip's Unmap reads it); false for an IPv6 address, a GID or a LID.
func (e Endpoint) IPv4() (a [4]byte, ok bool) {
	if !e.hasAddr || binary.LittleEndian.Uint64(e.addr[:8]) != 0 || binary.BigEndian.Uint32(e.addr[8:12]) != 0xffff {
		return a, false
	}
	return [4]byte(e.addr[12:]), true
}

// decDot holds each byte value's decimal digits, a dot after them, and
// their count with the dot.
var decDot = func() (t [256]struct {
	s [4]byte
	n int
}) {
	for v := range t {
		d := strconv.AppendUint(t[v].s[:0], uint64(v), 10)
		t[v].n = len(append(d, '.'))
	}
	return t
}()

// appendIPv4 appends a in dotted decimal, as netip.Addr's AppendTo
// writes an IPv4 address: each byte's digits and dot stored at once in
// room grown once.
func appendIPv4(dst []byte, a [4]byte) []byte {
	l := len(dst)
	dst = slices.Grow(dst, 16)
	b := dst[l : l+16]
	n := 0
	for _, x := range a {
		d := &decDot[x]
		*(*[4]byte)(b[n : n+4]) = d.s
		n += d.n
	}
	return dst[:l+n-1]
}

// appendHexN appends v as hexN formats it: "0x" and at least digits
// digits.
func appendHexN(dst []byte, v uint32, digits int) []byte {
	return decode.AppendHex(dst, uint64(v), digits)
}
