package flow

import (
	"math"
	"strconv"
)

// appendFixed appends v with prec decimals (0-4) as
// strconv.AppendFloat(dst, v, 'f', prec, 64) writes it. AppendFloat
// writes a fixed number of decimals with multiprecision arithmetic (its
// fast algorithms are for a number of significant digits), a third of
// the cost of a sessions table row at a million sessions. Here v·10^prec
// is rounded as an integer instead: the product x is the exact one, X,
// rounded, and rounding is monotonic, so with the halves k+0.5
// representable (x < 2^50) x is on the same side of every half as X,
// or on the half itself; that one tie (where AppendFloat rounds the
// exact X half to even) and negative, huge or not finite values go to
// AppendFloat.
func appendFixed(dst []byte, v float64, prec int) []byte {
	if prec < 0 || prec >= len(fixedScale) || math.Signbit(v) || !(v*float64(fixedScale[prec]) < 1<<50) {
		return strconv.AppendFloat(dst, v, 'f', prec, 64)
	}
	scale := fixedScale[prec]
	x := v * float64(scale)
	r := math.Floor(x)
	frac := x - r // exact: x < 2^50
	if frac == 0.5 {
		return strconv.AppendFloat(dst, v, 'f', prec, 64)
	}
	n := uint64(r)
	if frac > 0.5 {
		n++
	}
	dst = strconv.AppendUint(dst, n/scale, 10)
	if prec == 0 {
		return dst
	}
	var b [len(fixedScale)]byte
	n %= scale
	for i := prec; i > 0; i-- {
		b[i] = byte('0' + n%10)
		n /= 10
	}
	b[0] = '.'
	return append(dst, b[:prec+1]...)
}

// fixedScale[p] is 10^p.
var fixedScale = [...]uint64{1, 10, 100, 1000, 10000}
