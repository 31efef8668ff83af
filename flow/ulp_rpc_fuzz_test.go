package flow_test

import (
	"bytes"
	"encoding/binary"
	"testing"
	"time"

	"github.com/rocetap/rocetap/decode"
	"github.com/rocetap/rocetap/flow"
)

// FuzzRPCLinker feeds the RPC-over-RDMA linker (through a tracker, the
// QPs decoded as rpcordma) records read from the fuzz input: a kind (0/1 a
// SEND from the client/server, 2 an RDMA WRITE Only from the server, 3 an
// RDMA READ request from the server, 4 a READ response Only from the
// client), a length byte and that many bytes (for WRITE and READ: rkey and
// VA first). It checks the linker never panics, every call it lists is
// sane, and its stats add up.
func FuzzRPCLinker(f *testing.F) {
	var seed []byte
	rec := func(kind byte, b []byte) {
		seed = append(append(seed, kind, byte(len(b))), b...)
	}
	be := func(v ...uint32) []byte {
		var b []byte
		for _, w := range v {
			b = binary.BigEndian.AppendUint32(b, w)
		}
		return b
	}
	// a call with a reply chunk (key 9 at 0x1000), the server's WRITE into
	// it, the RDMA_NOMSG reply; a call with a read chunk read by the server
	rec(0, append(be(7, 1, 32, 0, 0, 0, 1, 1, 9, 64, 0, 0x1000), be(7, 0, 2, 100003, 4, 0, 0, 0, 0, 0)...))
	rec(2, append(append(be(9, 0, 0x1000), be(7, 1, 0, 0, 0, 0)...), 0, 0, 0, 0))
	rec(1, be(7, 1, 32, 1, 0, 0, 1, 1, 9, 24, 0, 0x1000))
	rec(0, append(be(8, 1, 32, 0, 1, 0, 5, 100, 0, 0x2000, 0, 0, 0), be(8, 0, 2, 100003, 4, 1, 0, 0, 0, 0, 0, 1, 0)...))
	rec(3, be(5, 0, 0x2000))
	rec(4, make([]byte, 100))
	rec(1, append(be(8, 1, 32, 0, 0, 0, 0), be(8, 1, 0, 0, 0, 0, 0, 0, 0)...))
	f.Add(seed)
	f.Fuzz(func(t *testing.T, data []byte) {
		tr := flow.New(flow.Options{DecodeAs: []flow.DecodeAs{{QP: 0x13, ULP: decode.ULPRPCRDMA}}, OnEvent: func(*flow.Event) {}})
		var p decode.Packet
		psn := [2]uint32{100, 500}
		at := time.Unix(1700000000, 0)
		hosts := [2][4]byte{{10, 0, 0, 1}, {10, 0, 0, 2}}
		qps := [2]uint32{0x12, 0x13} // the client's, the server's
		n := 0
		packet := func(side int, op uint8, psn uint32) {
			n++
			p = decode.Packet{Frame: decode.Frame{Number: n, Time: at.Add(time.Duration(n) * time.Microsecond), Len: 100}}
			p.Has = decode.HdrEth | decode.HdrIPv4 | decode.HdrUDP | decode.HdrBTH
			p.Encap = decode.EncapRoCEv2
			p.IPv4.Src, p.IPv4.Dst = hosts[side], hosts[1-side]
			p.BTH = decode.BTH{Opcode: decode.TransportRC.Opcode(op), DestQP: qps[1-side], PSN: decode.PSN(psn)}
			for _, h := range p.BTH.Opcode.ExtHeaders() {
				p.Has |= h
			}
		}
		for i := 0; i+2 <= len(data); {
			kind, ln := data[i]%5, int(data[i+1])
			i += 2
			b := data[i:min(i+ln, len(data))]
			i += len(b)
			side := 0
			if kind == 1 || kind == 2 || kind == 3 {
				side = 1
			}
			op := map[byte]uint8{0: decode.OpSendOnly, 1: decode.OpSendOnly, 2: decode.OpWriteOnly, 3: 0x0c, 4: decode.OpReadResponseOnly}[kind]
			if kind == 4 {
				packet(side, op, psn[1]-1) // answers the server's last READ request
			} else {
				packet(side, op, psn[side])
				psn[side]++
			}
			if kind == 2 || kind == 3 {
				var k [16]byte
				copy(k[:], b)
				p.RETH = decode.RETH{RKey: binary.BigEndian.Uint32(k[:]), VA: binary.BigEndian.Uint64(k[4:]), DMALen: uint32(len(b))}
				b = b[min(12, len(b)):]
			}
			if kind != 3 {
				p.Payload = b
				p.Has |= decode.HdrPayload
			}
			tr.Track(&p)
			if kind <= 2 { // the other side's ACK
				packet(1-side, decode.OpAcknowledge, psn[side]-1)
				p.AETH.Syndrome = 0x1F
				tr.Track(&p)
			}
		}
		tr.Flush()
		l, _ := tr.ULPLinker(decode.ULPRPCRDMA).(*flow.RPCLinker)
		if l == nil {
			if bytes.Equal(data, seed) {
				t.Fatal("the seed reached no linker")
			}
			return
		}
		if st := l.Stats(); bytes.Equal(data, seed) && (st.Calls != 2 || st.Replied != 2 || st.Errors != 0 || st.ByProc[0].Bytes != 28 || st.ByProc[1].Bytes != 100) {
			t.Fatalf("the seed: %+v", st)
		}
		st := l.Stats()
		if st.Replied+st.Unanswered != st.Calls || st.Errors > st.Replied || st.Calls+st.Orphans != len(l.Calls()) {
			t.Fatalf("stats %+v over %d calls", st, len(l.Calls()))
		}
		for _, c := range l.Calls() {
			if c.ReplyFrame != 0 && c.CallFrame > c.ReplyFrame || len(c.DataFrames) > 0 && c.CallFrame == 0 {
				t.Fatalf("%+v", c)
			}
		}
	})
}
