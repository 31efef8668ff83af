package flow

import (
	"testing"
	"time"

	"github.com/rocetap/rocetap/decode"
)

// FuzzTrack feeds the tracker packet sequences read from the fuzz input,
// 7 bytes a packet: opcode, PSN (3 bytes), direction and QP choice, AETH
// syndrome, payload size/flags. It checks the tracker never panics and
// keeps its counters consistent.
func FuzzTrack(f *testing.F) {
	f.Add([]byte{0x0a, 0, 0, 1, 0, 0x1f, 8, 0x11, 0, 0, 1, 1, 0x1f, 0})
	f.Add([]byte{0x06, 0xff, 0xff, 0xff, 0, 0, 64, 0x07, 0, 0, 0, 0, 0, 64, 0x08, 0, 0, 1, 0, 0, 3, 0x11, 0, 0, 0, 1, 0x60, 0})
	f.Add([]byte{0x0c, 0, 0, 5, 0, 0, 200, 0x0d, 0, 0, 5, 1, 0x1f, 255, 0x0f, 0, 0, 7, 1, 0x1f, 4, 0x13, 0, 0, 8, 2, 0, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		tr := New(Options{OnEvent: func(*Event) {}, OnMessage: func(*Message) {}, MaxOutstanding: 16})
		var p decode.Packet
		hosts := [3][4]byte{{10, 0, 0, 1}, {10, 0, 0, 2}, {10, 0, 0, 3}}
		for i := 0; i+7 <= len(data); i += 7 {
			b := data[i : i+7]
			p.Frame = decode.Frame{Number: i/7 + 1, Time: epoch.Add(time.Duration(i) * time.Microsecond * time.Duration(1+b[6]>>6)), Len: 100}
			p.Has = decode.HdrEth | decode.HdrIPv4 | decode.HdrUDP | decode.HdrBTH
			p.Flags = 0
			if b[6]&0x80 != 0 {
				p.Flags |= decode.FlagTruncated
			}
			src := hosts[b[4]%3]
			dst := hosts[(b[4]/3+1+b[4]%3)%3]
			p.IPv4.Src, p.IPv4.Dst = src, dst
			p.BTH = decode.BTH{Opcode: decode.Opcode(b[0]), PSN: uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3]), DestQP: uint32(b[4] >> 4)}
			for _, h := range p.BTH.Opcode.ExtHeaders() {
				p.Has |= h
			}
			p.AETH.Syndrome = b[5]
			p.RETH.DMALen = uint32(b[6]) * 37
			p.Payload = make([]byte, int(b[6]&0x3f)*16)
			if p.BTH.Opcode.Transport() == decode.TransportUD {
				p.DETH.SrcQP = uint32(b[5])
			}
			tr.Track(&p)
		}
		tr.Flush()
		for _, s := range tr.Sessions() {
			if s.LostPSNs > 1<<40 || s.Partial > 1<<40 {
				t.Fatalf("counter underflow in session %d: lost %d partial %d", s.ID, s.LostPSNs, s.Partial)
			}
			for side := range s.req {
				if len(s.req[side].out) > 16 || len(s.req[side].pend) > maxPending || len(s.req[side].missing) > maxMissing {
					t.Fatalf("state not bounded: %d outstanding, %d pending, %d missing", len(s.req[side].out), len(s.req[side].pend), len(s.req[side].missing))
				}
			}
		}
	})
}
