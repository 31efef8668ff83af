package decode_test

import (
	"testing"

	"github.com/rocetap/rocetap/decode"
	"github.com/rocetap/rocetap/internal/testcap"
)

// Decoder.Headers is called exactly once for every packet with a BTH (and
// for no other), once every header is decoded: after the call, decoding
// changes nothing of the packet's headers and addresses (only the ICRC's
// verdict is left). Over every testdata capture: RoCEv2 (IPv4, IPv6,
// IPoIB inside), RoCEv1, native IB with and without GRH, cut packets.
func TestHeadersOncePerBTH(t *testing.T) {
	paths := testcap.Glob(t, 20, "../testdata/*.pcap*", "../testdata/*/*.pcap*")
	type seen struct {
		has              decode.Hdr
		ipv4src, ipv4dst [4]byte
		ipv6src, ipv6dst [16]byte
		sgid, dgid       [16]byte
		slid, dlid       uint16
		destQP           uint32
		psn              decode.PSN
		payload          int
	}
	snap := func(p *decode.Packet) seen {
		return seen{has: p.Has, ipv4src: p.IPv4.Src, ipv4dst: p.IPv4.Dst, ipv6src: p.IPv6.Src, ipv6dst: p.IPv6.Dst, sgid: p.GRH.SGID, dgid: p.GRH.DGID,
			slid: p.LRH.SLID, dlid: p.LRH.DLID, destQP: p.BTH.DestQP, psn: p.BTH.PSN, payload: len(p.Payload)}
	}
	var calls int
	var at seen
	d := decode.NewDecoder()
	d.Headers = func(p *decode.Packet) { calls++; at = snap(p) }
	var p decode.Packet
	bth := 0
	for _, path := range paths {
		for _, fr := range testcap.ReadFile(t, path) {
			calls = 0
			p.Frame.Len = fr.Len
			d.Decode(&p, fr.Data, fr.LinkType)
			want := 0
			if p.Has&decode.HdrBTH != 0 {
				want = 1
				bth++
			}
			if calls != want {
				t.Errorf("%s frame %d: Headers called %d times, want %d", path, fr.Number, calls, want)
				continue
			}
			if calls == 1 && at != snap(&p) {
				t.Errorf("%s frame %d: the headers changed after Headers was called:\n at the call %+v\n after      %+v", path, fr.Number, at, snap(&p))
			}
		}
	}
	if bth < 1000 {
		t.Errorf("%d packets with a BTH in testdata, want more than 1,000", bth)
	}
}
