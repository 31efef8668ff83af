package flow

import (
	"testing"
	"time"

	"github.com/rocetap/rocetap/decode"
)

// FuzzFabric drives the fabric-health analysis with arbitrary RC traffic,
// ECN marks, CNPs, PFC and PAUSE frames and priorities (6 bytes a packet)
// and checks that its counts stay consistent and its state bounded.
func FuzzFabric(f *testing.F) {
	// a WRITE, its ACK, a CE-marked WRITE, the CNP to its QP, a PFC XOFF
	f.Add([]byte{0x0a, 0x10, 0, 0x02, 0, 1, 0x11, 0x21, 0, 0, 0, 2, 0x0a, 0x10, 0, 0x03, 3, 3, 0x81, 0x21, 0, 0x04, 0, 1, 0xfe, 0x08, 0xff, 1, 0, 1})
	// PFC refreshes and an XON; a PAUSE; VLAN-tagged traffic
	f.Add([]byte{0xfe, 0x08, 0xff, 0, 0, 200, 0xfe, 0x08, 0xff, 0, 0, 200, 0xfe, 0x08, 0, 0, 0, 1, 0xff, 0, 0x10, 0, 0, 1, 0x0a, 0x10, 0x80, 0x05, 2, 1})
	f.Fuzz(func(t *testing.T, data []byte) {
		o := Options{OnEvent: func(*Event) {}, CNPTimeout: 50 * time.Microsecond, RateWindow: 20 * time.Microsecond, StormAfter: time.Millisecond, LinkSpeed: 1e9}
		if len(data)%2 == 1 {
			o.PrioMap, _ = ParsePrioMap("pcp")
		}
		tr := New(o)
		var p decode.Packet
		hosts := [2][4]byte{{10, 0, 0, 1}, {10, 0, 0, 2}}
		now := epoch
		for i := 0; i+6 <= len(data); i += 6 {
			b := data[i : i+6]
			now = now.Add(time.Duration(b[5]) * time.Microsecond)
			p = decode.Packet{}
			p.Frame = decode.Frame{Number: i/6 + 1, Time: now, Len: 64 + int(b[4])*8, Interface: int(b[3] >> 6)}
			p.Has = decode.HdrEth
			p.Eth.Src[5] = b[3] & 3
			switch b[0] {
			case 0xfe, 0xff: // PFC, PAUSE
				p.Has |= decode.HdrPFC
				if b[0] == 0xff {
					p.Has = p.Has&^decode.HdrPFC | decode.HdrPause
				}
				p.PFC.ClassEnable = uint16(b[1])
				for k := range p.PFC.Quanta {
					p.PFC.Quanta[k] = uint16(b[2]) << (k & 7)
				}
				tr.Track(&p)
				continue
			}
			p.Has |= decode.HdrIPv4 | decode.HdrUDP | decode.HdrBTH
			if b[2]&0x80 != 0 {
				p.NumVLAN = 1
				p.VLAN[0].Priority = b[2] >> 4 & 7
			}
			src := b[1] >> 4 & 1
			p.IPv4.Src, p.IPv4.Dst = hosts[src], hosts[1-src]
			p.IPv4.TOS = b[4]&0xfc | b[4]&3
			p.BTH = decode.BTH{Opcode: decode.Opcode(b[0]), DestQP: uint32(b[1] & 0x0f), PSN: decode.PSN(b[3] & 0x3f)}
			for _, h := range p.BTH.Opcode.ExtHeaders() {
				p.Has |= h
			}
			p.AETH.Syndrome = 0x1f
			tr.Track(&p)
		}
		tr.Flush()
		st := tr.Fabric()
		if st.CEWithoutCNP > st.CE || st.CNPWithoutCE+st.CNPUnknownQP > st.CNPs || st.Reactions != st.RateCut+st.NoRateReduction || st.CNPDelay.N > st.CNPs {
			t.Fatalf("inconsistent congestion counts: %+v", st)
		}
		if tr.fab.paused != 0 {
			t.Fatalf("%d pauses still counted in force after the end", tr.fab.paused)
		}
		span := now.Sub(epoch)
		for _, port := range st.Ports {
			for i, pr := range port.Prio {
				if pr.Total < 0 || pr.Longest > pr.Total || pr.Total > span+time.Second {
					t.Fatalf("port %s priority %d: %+v over a capture of %v", port.Name(), i, pr, span)
				}
			}
		}
		for _, s := range tr.Sessions() {
			if c := s.Congestion(); c != nil {
				for _, d := range c.Dir {
					if d.CEWithoutCNP > d.CE || d.Reactions != d.RateCut+d.NoRateReduction {
						t.Fatalf("session %d: %+v", s.ID, d)
					}
				}
			}
		}
	})
}
