package flow

import (
	"fmt"
	"math/rand/v2"
	"net/netip"
	"testing"
)

// appendIPv4 writes what netip writes, on every byte value in every
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
		if got, want := string(appendIPv4([]byte("x"), a)), "x"+netip.AddrFrom4(a).String(); got != want {
			t.Fatalf("appendIPv4(%v) = %s, want %s", a, got[1:], want[1:])
		}
	}
}

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
		want := e.Node().String() + "/?"
		if !e.Node().IsValid() {
			want = "invalid node/?"
		}
		if known {
			want = want[:len(want)-1] + fmt.Sprintf("0x%06x", qpn)
		}
		if got := string(e.AppendTo(nil)); got != want {
			t.Errorf("%v: %s, want %s", e.addr, got, want)
		}
	})
}
