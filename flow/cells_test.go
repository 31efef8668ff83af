package flow

import (
	"fmt"
	"math"
	"math/rand/v2"
	"net/netip"
	"testing"
)

// IPv4 finds the addresses netip's Unmap makes IPv4: each byte of the
// ::ffff: prefix changed in turn makes an IPv6 address.
func TestEndpointIPv4(t *testing.T) {
	mapped := netip.MustParseAddr("::ffff:10.2.3.4").As16()
	check := func(e Endpoint) {
		t.Helper()
		a := e.Addr().Unmap()
		got, ok := e.IPv4()
		if ok != a.Is4() || ok && got != a.As4() {
			t.Errorf("%v (has %v): IPv4() = %v, %v; netip: %v", e.addr, e.hasAddr, got, ok, a)
		}
	}
	check(Endpoint{})
	check(Endpoint{addr: mapped, LID: 3})
	check(Endpoint{addr: mapped, hasAddr: true})
	for i := range 12 {
		for _, v := range []byte{0, 1, 0xfe, 0xff} {
			a := mapped
			a[i] = v
			check(Endpoint{addr: a, hasAddr: true})
		}
	}
}

// endpointRef writes e as its Node writes itself (netip for an address),
// then its QPN as fmt writes it: AppendTo's oracle.
func endpointRef(e Endpoint) string {
	node := "invalid node"
	if n := e.Node(); n.IsValid() {
		node = n.String()
	}
	if !e.QPNKnown {
		return node + "/?"
	}
	return node + fmt.Sprintf("/0x%06x", e.QPN)
}

// AppendTo and Width agree with the oracle on random endpoints: IPv4
// (mapped), IPv6 and LID, QPNs of every width known or not.
func TestEndpointAppendToWidth(t *testing.T) {
	r := rand.New(rand.NewPCG(8, 15))
	mapped := netip.MustParseAddr("::ffff:0.0.0.0").As16()
	for i := range 200000 {
		e := Endpoint{QPN: r.Uint32() >> r.IntN(33), QPNKnown: r.IntN(4) != 0, LID: uint16(r.Uint32())}
		switch i % 4 {
		case 0, 1:
			e.addr, e.hasAddr = mapped, true
			u := r.Uint32() >> (8 * r.IntN(4))
			e.addr[12], e.addr[13], e.addr[14], e.addr[15] = byte(u>>24), byte(u>>16), byte(u>>8), byte(u)
		case 2:
			e.hasAddr = true
			for k := range e.addr {
				e.addr[k] = byte(r.Uint32() >> (8 * r.IntN(4)))
			}
		}
		want := endpointRef(e)
		if got := string(e.AppendTo([]byte("x"))); got != "x"+want {
			t.Fatalf("%v/%#x: %s, want %s", e.addr, e.QPN, got[1:], want)
		}
		if got := e.Width(); got != len(want) {
			t.Fatalf("%v/%#x (%s): Width %d, want %d", e.addr, e.QPN, want, got, len(want))
		}
	}
}

// FuzzEndpointAppendTo: an endpoint is written as its Node writes itself
// (netip for an address), then its QPN as fmt writes it.
func FuzzEndpointAppendTo(f *testing.F) {
	f.Add(netip.MustParseAddr("::ffff:10.2.21.1").AsSlice(), uint32(0x642aa), true, uint16(0))
	f.Add(netip.MustParseAddr("fe80::2:c903:0:a").AsSlice(), uint32(0x1000000), true, uint16(0))
	f.Add([]byte{}, uint32(0x11), false, uint16(7))
	f.Fuzz(func(t *testing.T, addr []byte, qpn uint32, known bool, lid uint16) {
		e := Endpoint{QPN: qpn, QPNKnown: known, LID: lid}
		if len(addr) >= 16 {
			e.addr, e.hasAddr = [16]byte(addr), true
		}
		want := endpointRef(e)
		if got := string(e.AppendTo(nil)); got != want {
			t.Errorf("%v: %s, want %s", e.addr, got, want)
		}
		if got := e.Width(); got != len(want) {
			t.Errorf("%v (%s): Width %d, want %d", e.addr, want, got, len(want))
		}
	})
}

// BitRateWidth is the length of the rate as strconv writes it: on the
// units' edges and their rounding (999.995 kbit/s is "1000.00 kbit/s"),
// ties, values too large for appendFixed, and random rates and
// throughputs.
func TestBitRateWidth(t *testing.T) {
	check := func(bps float64) {
		t.Helper()
		if got, want := BitRateWidth(bps), len(bitRateRef(bps)); got != want {
			t.Fatalf("BitRateWidth(%v) = %d, want %d (%s)", bps, got, want, bitRateRef(bps))
		}
	}
	for _, v := range []float64{0, 0.5, 1.5, 9.5, 99.5, 999.5, 999.4999, 1e3, 9999.95, 999995, 999994.99, 1e6, 999995e3, 1e9, 9.995e9, 99.995e9, 1e12, 1e15, 1e30, 1e300,
		math.MaxFloat64, math.Inf(1), math.NaN(), -1, math.Copysign(0, -1), math.SmallestNonzeroFloat64} {
		check(v)
		check(math.Nextafter(v, math.Inf(1)))
		check(math.Nextafter(v, math.Inf(-1)))
	}
	r := rand.New(rand.NewPCG(6, 15))
	for range 300000 {
		check(math.Pow(10, r.Float64()*18))
		check(float64(r.Uint64N(1<<40)*8) / (float64(r.Uint64N(1e10)+1) / 1e9))
		check(float64(r.Uint64N(1<<20)) + 0.5)
	}
}

// BitRateMax's width is the widest of the rates added, each measured:
// sets of rates drawn around the units' edges, their roundings and
// ties, and the odd ones (negative, -0, infinite, NaN), whose width is
// not their unit's largest's.
func TestBitRateMax(t *testing.T) {
	edges := []float64{0, 0.5, 9.5, 999.4999, 999.5, 1e3, 9999.95, 999994.99, 999995, 1e6, 999995e3, 1e9, 9.995e9, 99.995e9, 1e12, 1e30, math.MaxFloat64,
		math.Inf(1), math.Inf(-1), math.NaN(), -1, math.Copysign(0, -1)}
	r := rand.New(rand.NewPCG(25, 11))
	var empty BitRateMax
	if w := empty.Width(); w != 0 {
		t.Fatalf("no rate: width %d", w)
	}
	for range 20000 {
		var m BitRateMax
		want := 0
		var added []float64
		for range 1 + r.IntN(6) {
			var v float64
			switch r.IntN(3) {
			case 0:
				v = edges[r.IntN(len(edges))]
				v = [...]float64{v, math.Nextafter(v, math.Inf(1)), math.Nextafter(v, math.Inf(-1))}[r.IntN(3)]
			case 1:
				v = math.Pow(10, r.Float64()*15)
			default:
				v = float64(r.Uint64N(1<<40)*8) / (float64(r.Uint64N(1e10)+1) / 1e9)
			}
			m.Add(v)
			added = append(added, v)
			want = max(want, BitRateWidth(v))
		}
		if got := m.Width(); got != want {
			t.Fatalf("rates %v: width %d, want %d", added, got, want)
		}
	}
}

func FuzzBitRateWidth(f *testing.F) {
	for _, v := range []float64{0, 999.5, 999995e3, 4.64e9, 1e300} {
		f.Add(v)
	}
	f.Fuzz(func(t *testing.T, bps float64) {
		if got, want := BitRateWidth(bps), len(bitRateRef(bps)); got != want {
			t.Errorf("BitRateWidth(%v) = %d, want %d (%s)", bps, got, want, bitRateRef(bps))
		}
	})
}
