package decode

import (
	"math/bits"
	"slices"
	"strconv"
)

// The integer formatters of the fields, for the reports (flow, printer)
// to write their numbers as fields are written: in place, two digits at
// a time, without strconv's copy from a buffer of its own (a call of
// memmove per number; a sessions table of a million rows writes a dozen
// numbers a row).

// DecimalWidth returns the digits of u in decimal (as AppendUint writes
// it): log10 from the bit length (1233/4096 ~ log10 2), then one
// comparison.
func DecimalWidth(u uint64) int {
	n := bits.Len64(u) * 1233 >> 12
	if n < len(pow10) && u >= pow10[n] {
		n++
	}
	return max(n, 1)
}

// AppendUint appends u in decimal, as strconv.AppendUint(dst, u, 10)
// does.
func AppendUint(dst []byte, u uint64) []byte {
	if u < 10 { // inlined: most of a session's counts
		return append(dst, byte('0'+u))
	}
	return appendDec(dst, u)
}

// AppendHex appends v as "0x" and at least width hex digits (lower
// case), as fmt's %#0*x does with the width of the digits.
func AppendHex(dst []byte, v uint64, width int) []byte { return appendHexInt(dst, v, width) }

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

// AppendIPv4 appends a in dotted decimal, as netip.Addr's AppendTo
// writes an IPv4 address: each byte's digits and dot stored at once in
// room grown once (a sessions table writes two addresses a row).
func AppendIPv4(dst []byte, a [4]byte) []byte {
	l := len(dst)
	dst = slices.Grow(dst, 16)
	b := dst[l : l+16]
	*(*[4]byte)(b) = decDot[a[0]].s
	n := decDot[a[0]].n
	*(*[4]byte)(b[n:]) = decDot[a[1]].s
	n += decDot[a[1]].n
	*(*[4]byte)(b[n:]) = decDot[a[2]].s
	n += decDot[a[2]].n
	*(*[4]byte)(b[n:]) = decDot[a[3]].s
	return dst[:l+n+decDot[a[3]].n-1]
}

// IPv4Width returns the length of what AppendIPv4 appends for a.
func IPv4Width(a [4]byte) int {
	return decDot[a[0]].n + decDot[a[1]].n + decDot[a[2]].n + decDot[a[3]].n - 1 // the last dot not written
}
