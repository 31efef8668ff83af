package decode

import "math/bits"

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
