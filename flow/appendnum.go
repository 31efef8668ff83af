package flow

import (
	"math"
	"strconv"

	"github.com/rocetap/rocetap/decode"
)

// appendFixed appends v with prec decimals (0 or 2) as
// strconv.AppendFloat(dst, v, 'f', prec, 64) writes it. AppendFloat
// writes a fixed number of decimals with multiprecision arithmetic (its
// fast algorithms are for a number of significant digits), a third of
// the cost of a sessions table row at a million sessions. Here v·10^prec
// is rounded as an integer instead: the product x is the exact one, X,
// rounded, and rounding is monotonic, so with the halves k+0.5
// representable (x < 2^50) x is on the same side of every half as X,
// or on the half itself; that one tie (where AppendFloat rounds the
// exact X half to even) and negative, huge or not finite values go to
// AppendFloat, as does any other prec.
func appendFixed(dst []byte, v float64, prec int) []byte {
	n, ok := fixedRound(v, prec)
	if !ok {
		return strconv.AppendFloat(dst, v, 'f', prec, 64)
	}
	if prec == 0 {
		return decode.AppendUint(dst, n)
	}
	c := n % 100
	return append(decode.AppendUint(dst, n/100), '.', byte('0'+c/10), byte('0'+c%10))
}

// fixedRound returns v·10^prec rounded as appendFixed rounds it; false
// where appendFixed leaves v to AppendFloat.
func fixedRound(v float64, prec int) (uint64, bool) {
	x := v
	if prec == 2 {
		x *= 100
	}
	if prec&^2 != 0 || math.Signbit(v) || !(x < 1<<50) {
		return 0, false
	}
	r := math.Floor(x)
	frac := x - r // exact: x < 2^50
	if frac == 0.5 {
		return 0, false
	}
	n := uint64(r)
	if frac > 0.5 {
		n++
	}
	return n, true
}
