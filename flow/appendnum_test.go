package flow

import (
	"fmt"
	"math"
	"math/rand/v2"
	"net/netip"
	"strconv"
	"testing"
)

// appendFixed writes what strconv.AppendFloat writes: on ties and the
// values next to them (where its integer path gives way), on the
// bit-rate units' edges, and on random values of every magnitude.
func TestAppendFixed(t *testing.T) {
	check := func(v float64, prec int) {
		t.Helper()
		want := strconv.AppendFloat(nil, v, 'f', prec, 64)
		if got := appendFixed(nil, v, prec); string(got) != string(want) {
			t.Errorf("appendFixed(%v (%#x), %d) = %s, want %s", v, math.Float64bits(v), prec, got, want)
		}
	}
	var vs []float64
	for _, v := range []float64{0, math.Copysign(0, -1), -1, -0.005, 0.005, 0.015, 0.125, 0.375, 1.005, 2.675, 9.995, 99.995, 999.995, 999.9949999, 0.5, 1.5, 2.5, 999.5, 1e3, 1<<30 - 1, 1 << 30, 1e30, math.Inf(1), math.Inf(-1), math.NaN(), math.SmallestNonzeroFloat64, math.MaxFloat64} {
		vs = append(vs, v, math.Nextafter(v, math.Inf(1)), math.Nextafter(v, math.Inf(-1)))
	}
	r := rand.New(rand.NewPCG(1, 15))
	for range 200000 {
		k := r.Uint64N(1 << 32)
		vs = append(vs,
			float64(k)/100+0.005, // a tie in decimal, not in binary
			float64(k)/200,       // exact halves and quarters
			r.Float64()*1000,     // a unit's range
			r.Float64()*math.Pow(10, float64(r.IntN(14)-3)),
			float64(r.Uint64N(1<<40)*8)/float64(r.Uint64N(1e10)+1)/1e9, // bytes·8 / seconds, as Throughput
			math.Float64frombits(r.Uint64()))
	}
	// decimal ties and their neighbours: the computed product of one a
	// few ulps from the tie may round onto it
	for range 200000 {
		p := 1 + r.IntN(4)
		v := (float64(r.Uint64N(1<<50>>(3*p))) + 0.5) / math.Pow10(p)
		for range 4 {
			vs = append(vs, v, math.Nextafter(v, 0))
			v = math.Nextafter(v, math.Inf(1))
		}
	}
	for _, v := range vs {
		for prec := range 4 {
			check(v, prec)
		}
	}
}

// bitRateRef writes a bit rate through strconv.FormatFloat, as
// AppendBitRate did before appendFixed: its oracle.
func bitRateRef(bps float64) string {
	switch {
	case bps >= 1e9:
		return strconv.FormatFloat(bps/1e9, 'f', 2, 64) + " Gbit/s"
	case bps >= 1e6:
		return strconv.FormatFloat(bps/1e6, 'f', 2, 64) + " Mbit/s"
	case bps >= 1e3:
		return strconv.FormatFloat(bps/1e3, 'f', 2, 64) + " kbit/s"
	}
	return strconv.FormatFloat(bps, 'f', 0, 64) + " bit/s"
}

// The bit rates written as strconv.AppendFloat wrote them before
// appendFixed: the unit's edges, where rounding moves the number to four
// digits ("1000.00 Mbit/s").
func TestAppendBitRate(t *testing.T) {
	old := bitRateRef
	for _, c := range []struct {
		bps  float64
		want string
	}{
		{0, "0 bit/s"},
		{12, "12 bit/s"},
		{999.5, "1000 bit/s"}, // half to even
		{998.5, "998 bit/s"},
		{640e3, "640.00 kbit/s"},
		{999995e3, "1000.00 Mbit/s"},
		{2.5e9, "2.50 Gbit/s"},
		{4.64e9, "4.64 Gbit/s"},
		{386660000, "386.66 Mbit/s"},
	} {
		if got := string(AppendBitRate(nil, c.bps)); got != c.want || got != old(c.bps) {
			t.Errorf("AppendBitRate(%v) = %s, want %s (before: %s)", c.bps, got, c.want, old(c.bps))
		}
	}
	r := rand.New(rand.NewPCG(2, 15))
	for range 300000 {
		bps := math.Pow(10, r.Float64()*15) // 1 bit/s to 1 Pbit/s
		if got, want := string(AppendBitRate(nil, bps)), old(bps); got != want {
			t.Fatalf("AppendBitRate(%v) = %s, want %s", bps, got, want)
		}
	}
}

func FuzzAppendFixed(f *testing.F) {
	for _, v := range []float64{0, 0.125, 2.675, 999.995, 386.66, 1 << 30} {
		f.Add(v, uint8(2))
	}
	f.Fuzz(func(t *testing.T, v float64, prec uint8) {
		p := int(prec % 4)
		if got, want := appendFixed(nil, v, p), strconv.AppendFloat(nil, v, 'f', p, 64); string(got) != string(want) {
			t.Errorf("appendFixed(%v, %d) = %s, want %s", v, p, got, want)
		}
	})
}

// appendHexN writes what fmt's %#0*x writes, on every digit count.
func TestAppendHexN(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 15))
	vs := []uint32{0, 1, 0xf, 0x10, 0xffffff, 0x1000000, math.MaxUint32}
	for range 10000 {
		vs = append(vs, r.Uint32()>>r.IntN(32))
	}
	for _, v := range vs {
		for digits := range 11 {
			want := fmt.Sprintf("0x%0*x", digits, v)
			if got := string(appendHexN([]byte("x"), v, digits)); got != "x"+want {
				t.Fatalf("appendHexN(%#x, %d) = %s, want %s", v, digits, got[1:], want)
			}
		}
	}
}

// An endpoint is written as its Node writes itself, then its QPN: IPv4,
// IPv4-mapped, IPv6, LID. (An endpoint keeps no zone: the tracker's
// addresses come from packets, which have none.)
func TestEndpointAppendTo(t *testing.T) {
	at := func(a string, qpn uint32, known bool) Endpoint {
		return Endpoint{addr: netip.MustParseAddr(a).As16(), hasAddr: true, QPN: qpn, QPNKnown: known}
	}
	for _, e := range []Endpoint{
		at("10.2.21.1", 0x642aa, true),
		at("::ffff:192.168.77.10", 0, false),
		at("::ffff:1.2.3.4", 1, true),
		at("fe80::2:c903:0:a", 0x1000000, true),
		at("::1.2.3.4", 0, false),
		{LID: 7, QPN: 0x11, QPNKnown: true},
	} {
		qpn := "?"
		if e.QPNKnown {
			qpn = fmt.Sprintf("0x%06x", e.QPN)
		}
		if got, want := string(e.AppendTo(nil)), e.Node().String()+"/"+qpn; got != want {
			t.Errorf("%v: %s, want %s", e.Addr(), got, want)
		}
	}
}
