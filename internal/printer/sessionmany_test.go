package printer

import (
	"testing"
	"time"

	"github.com/rocetap/rocetap/decode"
	"github.com/rocetap/rocetap/flow"
)

// pairSessions tracks n RC QP pairs as gencap -pairs makes them (each
// WRITE Only + ACK, READ + READ Response Only, 1 µs apart; host pair
// p mod 64; QPNs 0x1000+2p and 0x1001+2p) and returns their sessions and
// the first packet's time: the sessions of the QP-scaling capture, from
// no file.
func pairSessions(n int) ([]*flow.Session, time.Time) {
	const (
		writeOnly = decode.Opcode(decode.TransportRC | decode.OpWriteOnly)
		readReq   = decode.Opcode(decode.TransportRC | decode.OpReadRequest)
		readOnly  = decode.Opcode(decode.TransportRC | decode.OpReadResponseOnly)
		ackOp     = decode.Opcode(decode.TransportRC | decode.OpAcknowledge)
		ackSyn    = 0x1f
	)
	tr := flow.New(flow.Options{})
	start := time.Unix(1700000000, 0)
	at := start
	data := make([]byte, 1024)
	var p decode.Packet
	for i := range n {
		h := byte(i % 64)
		req, resp := [4]byte{10, 2, h, 1}, [4]byte{10, 2, h, 2}
		qa, qb := uint32(0x1000+2*i), uint32(0x1001+2*i)
		psn := uint32(i*7919) & decode.PSNMask
		steps := [4]struct {
			src, dst [4]byte
			qp       uint32
			op       decode.Opcode
			psn      uint32
		}{{req, resp, qb, writeOnly, psn}, {resp, req, qa, ackOp, psn}, {req, resp, qb, readReq, psn + 1}, {resp, req, qa, readOnly, psn + 1}}
		for k, st := range steps {
			p = decode.Packet{Analysis: decode.Analysis{Acked: p.Analysis.Acked[:0]}}
			p.Frame = decode.Frame{Number: 4*i + k + 1, Time: at, Len: 580}
			at = at.Add(time.Microsecond)
			p.Has = decode.HdrEth | decode.HdrIPv4 | decode.HdrUDP | decode.HdrBTH
			p.Encap = decode.EncapRoCEv2
			p.IPv4.Src, p.IPv4.Dst = st.src, st.dst
			p.BTH.Opcode, p.BTH.DestQP, p.BTH.PSN = st.op, st.qp, decode.PSNOf(st.psn)
			switch st.op {
			case writeOnly:
				p.Has |= decode.HdrRETH | decode.HdrPayload
				p.RETH.DMALen, p.Payload = 1024, data
			case readReq:
				p.Has |= decode.HdrRETH
				p.RETH.DMALen = 1024
			case ackOp:
				p.Has |= decode.HdrAETH
				p.AETH.Syndrome = ackSyn
			case readOnly:
				p.Has |= decode.HdrAETH | decode.HdrPayload
				p.AETH.Syndrome, p.Payload = ackSyn, data
			}
			tr.Track(&p)
		}
	}
	tr.Flush()
	return tr.Sessions(), start
}

// BenchmarkSessionsTableMany measures and writes the sessions table of
// 50,000 QP pairs of four packets (the QP-scaling capture's): at a
// million sessions, the table is what sessions costs over stats.
func BenchmarkSessionsTableMany(b *testing.B) {
	ss, start := pairSessions(50000)
	buf := make([]byte, 0, 1<<20)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		t := NewSessionsTable(ss, start)
		buf = t.AppendHead(buf[:0])
		for _, s := range ss {
			buf = t.AppendRow(buf, s)
			if len(buf) > 1<<19 {
				buf = buf[:0]
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(ss)), "ns/session")
}
