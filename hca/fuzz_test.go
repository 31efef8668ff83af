package hca

import (
	"encoding/binary"
	"testing"
	"time"

	"github.com/rocetap/rocetap/decode"
)

// FuzzReceive feeds the model arbitrary request sequences: 16 bytes per
// packet choose the opcode, QP, PSN, AckReq, VA, rkey, DMA length and
// payload size. The model must never panic, and its responses must stay
// within the spec's shapes (PSNs 24-bit, READ payloads ≤ MTU).
func FuzzReceive(f *testing.F) {
	f.Add([]byte{0x0a, 0x11, 0, 100, 1, 0, 0, 1, 0, 0, 0x12, 0x34, 0, 0, 0, 8})
	f.Add([]byte{0x0c, 0x11, 0, 100, 1, 0, 0, 1, 0, 0, 0x12, 0x34, 0, 0, 0x0b, 0xb8,
		0x0c, 0x11, 0, 100, 1, 0, 0, 1, 0, 0, 0x12, 0x34, 0, 0, 0x0b, 0xb8})
	f.Add([]byte{0x14, 0x11, 0, 100, 1, 0, 0, 1, 0, 0, 0x12, 0x34, 0, 0, 0, 0,
		0x00, 0x11, 0, 101, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 4, 0,
		0x02, 0x11, 0, 103, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 9})
	f.Add([]byte{0x20, 0x14, 0, 100, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 4, 0, 0x64, 0x15, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0x11, 0, 0, 0, 3})
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := NewModel(testConfig(), Options{Profile: Profile(len(data) & 1)})
		if err != nil {
			t.Fatal(err)
		}
		var p decode.Packet
		buf := make([]byte, 4096)
		for i := 0; i+16 <= len(data); i += 16 {
			b := data[i : i+16]
			p = decode.Packet{}
			p.Frame.Number = i/16 + 1
			p.Has = decode.HdrBTH
			p.BTH.Opcode = decode.Opcode(b[0])
			for _, h := range p.BTH.Opcode.ExtHeaders() {
				p.Has |= h
			}
			p.BTH.DestQP = 0x10 + uint32(b[1]&7)
			p.BTH.PSN = decode.PSN(uint32(b[2])<<16 | uint32(b[3])<<8 | uint32(b[2]^b[3]))
			p.BTH.AckReq = b[4]&1 != 0
			p.BTH.PadCount = b[4] >> 1 & 3
			va := 0x10000 + uint64(binary.BigEndian.Uint16(b[5:]))*uint64(1+b[7]&3)
			key := binary.BigEndian.Uint32(b[8:])
			switch b[4] >> 3 & 3 {
			case 1:
				key = 0x1234
			case 2:
				key = 0x08000100
			}
			n := uint32(binary.BigEndian.Uint16(b[12:]))
			p.RETH = decode.RETH{VA: va, RKey: key, DMALen: n}
			p.AtomicETH = decode.AtomicETH{VA: va, RKey: key, SwapAddData: uint64(n), CompareData: uint64(b[14])}
			p.IETH.RKey = key
			p.DETH = decode.DETH{QKey: uint32(b[15] & 0x1f), SrcQP: 7}
			p.Payload = buf[:min(int(binary.BigEndian.Uint16(b[14:]))&0x7ff, len(buf))]
			if b[7]&0x80 != 0 {
				p.Flags |= decode.FlagTruncated
			}
			r := m.Receive(&p, time.Unix(int64(i), 0))
			for _, x := range r.Responses {
				if x.PSN > decode.PSNMask || x.MSN > decode.PSNMask {
					t.Fatalf("response PSN %#x MSN %#x beyond 24 bits", x.PSN, x.MSN)
				}
				if len(x.Payload) > 1024 || len(x.Known) != len(x.Payload) {
					t.Fatalf("READ response with %d bytes, %d known flags (MTU 1024)", len(x.Payload), len(x.Known))
				}
			}
		}
		m.Finish()
	})
}

func BenchmarkReceive(b *testing.B) {
	m, err := NewModel(testConfig(), Options{})
	if err != nil {
		b.Fatal(err)
	}
	payload := make([]byte, 1024)
	var w, rd decode.Packet
	w.Has = decode.HdrBTH | decode.HdrRETH
	w.BTH = decode.BTH{Opcode: decode.OpWriteOnly, DestQP: 0x11, AckReq: true}
	w.RETH = decode.RETH{VA: mrVA, RKey: mrKey, DMALen: 1024}
	w.Payload = payload
	rd.Has = decode.HdrBTH | decode.HdrRETH
	rd.BTH = decode.BTH{Opcode: decode.OpReadRequest, DestQP: 0x11, AckReq: true}
	rd.RETH = decode.RETH{VA: mrVA, RKey: mrKey, DMALen: 1024}
	psn := decode.PSN(100)
	ts := time.Unix(0, 0)
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		p := &w
		if i&1 == 1 {
			p = &rd
		}
		p.BTH.PSN = psn
		psn = psn.Next()
		p.RETH.VA = mrVA + uint64(i&3)*1024
		if r := m.Receive(p, ts); len(r.Responses) != 1 {
			b.Fatalf("packet %d: %d responses", i, len(r.Responses))
		}
	}
}
