package decode

import (
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"net/netip"
	"testing"
)

// secondsRef is AppendSeconds' oracle: the exact quotient by 10^9 from
// math/big, its decimals truncated by fmt.
func secondsRef(ns int64, decimals int) string {
	q, r := new(big.Int).QuoRem(big.NewInt(ns), big.NewInt(1e9), new(big.Int))
	sign := ""
	if ns < 0 {
		sign = "-"
		q.Neg(q)
		r.Neg(r)
	}
	s := sign + q.String()
	if decimals <= 0 {
		return s
	}
	return s + "." + fmt.Sprintf("%09d", r)[:min(decimals, 9)]
}

// AppendSeconds writes what the oracle writes: every digit count of the
// seconds, the edges of int64, every number of decimals.
func TestAppendSeconds(t *testing.T) {
	ns := []int64{0, 1, -1, 9, 10, 99, 999999999, 1e9, -1e9, 1e9 + 1, 1700000000123456789, math.MaxInt64, math.MinInt64, math.MinInt64 + 1}
	for p := int64(1); p <= 1e18; p *= 10 {
		ns = append(ns, p-1, p, p+1, -p)
	}
	r := rand.New(rand.NewPCG(5, 15))
	for range 100000 {
		v := r.Int64() >> r.IntN(63)
		ns = append(ns, v, -v)
	}
	for _, v := range ns {
		for d := -1; d <= 11; d++ {
			if got, want := string(AppendSeconds([]byte("x"), v, d)), "x"+secondsRef(v, d); got != want {
				t.Fatalf("AppendSeconds(%d, %d) = %s, want %s", v, d, got[1:], want[1:])
			}
		}
	}
}

// The exported integer formatters are strconv's and fmt's (their
// digit counts are tested on appendDec and appendHexInt).
func TestAppendUintHex(t *testing.T) {
	for _, v := range []uint64{0, 7, 10, 2320, 1 << 32, math.MaxUint64} {
		if got, want := string(AppendUint(nil, v)), fmt.Sprint(v); got != want {
			t.Errorf("AppendUint(%d) = %s, want %s", v, got, want)
		}
		if got, want := string(AppendHex(nil, v, 6)), fmt.Sprintf("0x%06x", v); got != want {
			t.Errorf("AppendHex(%d, 6) = %s, want %s", v, got, want)
		}
	}
}

func FuzzAppendSeconds(f *testing.F) {
	for _, v := range []int64{0, 342000, -1, 1700000000123456789, math.MinInt64} {
		f.Add(v, int8(6))
	}
	f.Fuzz(func(t *testing.T, ns int64, decimals int8) {
		d := int(decimals % 12)
		if got, want := string(AppendSeconds(nil, ns, d)), secondsRef(ns, d); got != want {
			t.Errorf("AppendSeconds(%d, %d) = %s, want %s", ns, d, got, want)
		}
	})
}

// AppendIPv4 writes what netip writes, on every byte value in every
// position and on random addresses.
func TestAppendIPv4(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 15))
	var as [][4]byte
	for pos := range 4 {
		for v := range 256 {
			a := [4]byte{byte(r.Uint32()), byte(r.Uint32()), byte(r.Uint32()), byte(r.Uint32())}
			a[pos] = byte(v)
			as = append(as, a)
		}
	}
	for range 100000 {
		u := r.Uint32()
		as = append(as, [4]byte{byte(u >> 24), byte(u >> 16), byte(u >> 8), byte(u)})
	}
	for _, a := range as {
		want := netip.AddrFrom4(a).String()
		if got := string(AppendIPv4([]byte("x"), a)); got != "x"+want {
			t.Fatalf("AppendIPv4(%v) = %s, want %s", a, got[1:], want)
		}
		if w := IPv4Width(a); w != len(want) {
			t.Fatalf("IPv4Width(%v) = %d, want %d", a, w, len(want))
		}
	}
}
