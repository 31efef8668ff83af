package flow

import (
	"net/netip"
	"testing"
	"time"

	"github.com/rocetap/rocetap/decode"
	"github.com/rocetap/rocetap/hca"
)

// fuzzMPT is a responder at 10.0.0.2 with QPs 0-15 (every fourth lacks
// remote access), MRs with rkeys 0x00-0x3f (some small, some in another
// PD) and type 1 and type 2 windows, for the fuzzer's keys to hit.
func fuzzMPT(tb testing.TB) *hca.Model {
	tb.Helper()
	remote := hca.RemoteWrite | hca.RemoteRead | hca.RemoteAtomic
	f := &hca.Config{Responder: decode.NodeAddr(netip.AddrFrom4([4]byte{10, 0, 0, 2})), PDs: []hca.PDConfig{{ID: 1}, {ID: 2}}}
	for q := uint32(0); q < 16; q++ {
		acc := remote
		if q%4 == 3 {
			acc = 0
		}
		f.QPs = append(f.QPs, hca.QPConfig{QPN: q, PD: 1, Type: decode.TransportRC, Access: acc, MTU: 1024})
	}
	for k := uint32(1); k < 0x40; k++ {
		pd := uint32(1 + k%5/4)
		f.MRs = append(f.MRs, hca.MRConfig{RKey: k, LKey: k, VA: uint64(k) << 12, Length: uint64(k%7) * 1000, PD: pd,
			Access: hca.LocalWrite | hca.MWBind | remote&^hca.Access(k&6)})
	}
	f.MWs = []hca.MWConfig{{RKey: 0x41, Type: 1, VA: 1 << 12, Length: 100, PD: 1, Access: remote, MRRKey: 1},
		{RKey: 0x42, Type: 2, VA: 2 << 12, Length: 100, PD: 1, Access: remote, MRRKey: 2, QPN: 1, HasQPN: true}}
	m, err := hca.NewModel(f, hca.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	return m
}

// FuzzTrack feeds the tracker packet sequences read from the fuzz input,
// 7 bytes a packet: opcode, PSN (3 bytes), direction and QP choice, AETH
// syndrome, payload size/flags. It checks the tracker never panics and
// keeps its counters consistent.
func FuzzTrack(f *testing.F) {
	f.Add([]byte{0x0a, 0, 0, 1, 0, 0x1f, 8, 0x11, 0, 0, 1, 1, 0x1f, 0})
	f.Add([]byte{0x06, 0xff, 0xff, 0xff, 0, 0, 64, 0x07, 0, 0, 0, 0, 0, 64, 0x08, 0, 0, 1, 0, 0, 3, 0x11, 0, 0, 0, 1, 0x60, 0})
	f.Add([]byte{0x0c, 0, 0, 5, 0, 0, 200, 0x0d, 0, 0, 5, 1, 0x1f, 255, 0x0f, 0, 0, 7, 1, 0x1f, 4, 0x13, 0, 0, 8, 2, 0, 0})
	// odd length: with the MPT; a WRITE to 10.0.0.2 QP 0 with rkey 1, its ACK
	f.Add([]byte{0x0a, 0, 0, 1, 0, 0x01, 8, 0x11, 0, 0, 1, 4, 0x1f, 0, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		o := Options{OnEvent: func(*Event) {}, OnMessage: func(*Message) {}, MaxOutstanding: 16}
		if len(data)%2 == 1 {
			o.MPT = fuzzMPT(t)
		}
		if len(data)%3 == 0 {
			// QPs 0-3 carry NVMe-oF: payloads of 16 and 64 bytes are
			// completions and commands
			for q := uint32(0); q < 4; q++ {
				o.DecodeAs = append(o.DecodeAs, DecodeAs{QP: q, ULP: decode.ULPNVMe})
			}
		}
		tr := New(o)
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
			p.BTH = decode.BTH{Opcode: decode.Opcode(b[0]), PSN: decode.PSN(uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])), DestQP: uint32(b[4] >> 4)}
			for _, h := range p.BTH.Opcode.ExtHeaders() {
				p.Has |= h
			}
			p.AETH.Syndrome = b[5]
			p.RETH.DMALen = uint32(b[6]) * 37
			key := uint32(b[5]&0x3f) + uint32(b[6]>>7)*0x40
			p.RETH.RKey, p.RETH.VA = key, uint64(b[3])<<10
			p.AtomicETH.RKey, p.AtomicETH.VA = key, uint64(b[3])<<10|uint64(b[2]&7)
			p.IETH.RKey = key
			p.Payload = make([]byte, int(b[6]&0x3f)*16)
			if p.BTH.Opcode.Transport() == decode.TransportUD {
				p.DETH.SrcQP = uint32(b[5])
			}
			tr.Track(&p)
		}
		tr.Flush()
		for _, s := range tr.Sessions() {
			if s.Findings().LostPSNs > 1<<40 || s.Findings().Partial > 1<<40 {
				t.Fatalf("counter underflow in session %d: lost %d partial %d", s.ID, s.Findings().LostPSNs, s.Findings().Partial)
			}
			if s.Findings().MPTViolations > s.Findings().MPTChecked || s.Findings().MPTAccepted+s.Findings().MPTRejected > s.Findings().MPTChecked {
				t.Fatalf("session %d: %d MPT checks, %d violations, %d accepted, %d rejected", s.ID, s.Findings().MPTChecked, s.Findings().MPTViolations, s.Findings().MPTAccepted, s.Findings().MPTRejected)
			}
			for side := range 2 {
				// responses are derived (Session.Responses): requests and
				// CNPs counted beyond a side's packets would wrap them
				if d := s.Sent[side]; s.Responses(side) > d.Packets {
					t.Fatalf("session %d side %d: %d responses of %d packets (%d requests)", s.ID, side, s.Responses(side), d.Packets, d.Requests)
				}
			}
			if s.MergedInto() != 0 {
				t.Fatalf("session %d is listed but merged into %d", s.ID, s.MergedInto())
			}
			if s.live == nil {
				continue
			}
			for _, st := range &s.live.req {
				if len(st.out) > 16 || len(st.pend) > maxPending || len(st.missing) > maxMissing || len(st.recent) > maxRecent || len(st.done) > maxDone {
					t.Fatalf("state not bounded: %d outstanding, %d pending, %d missing, %d recent, %d done", len(st.out), len(st.pend), len(st.missing), len(st.recent), len(st.done))
				}
			}
		}
	})
}
