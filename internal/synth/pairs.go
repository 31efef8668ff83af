package synth

import (
	"time"

	"github.com/rocetap/rocetap/decode"
)

// QPPairs calls each with the decoded packets of n RC QP pairs as
// gencap -pairs writes them, for trackers fed without a file: each pair
// does RDMA WRITE Only + ACK, then RDMA READ Request + READ Response Only
// (1 KiB each), 1 µs apart from at on; pair i runs between hosts
// 10.2.(i mod 64).1 and .2, its QPNs 0x1000+2i and 0x1001+2i, its first
// PSN i×7919. The packet is reused (its Acked buffer kept, as the stream
// package does). It returns the time of the last packet.
func QPPairs(n int, at time.Time, each func(p *decode.Packet)) time.Time {
	return QPPairsRounds(n, 1, at, each)
}

// QPPairsRounds is QPPairs with each pair doing the exchange rounds
// times in a row (its PSNs go on), and each answer of round r coming
// 1 + r mod 8 µs after its request: a pair that did many messages, whose
// latencies spread over a few histogram buckets.
func QPPairsRounds(n, rounds int, at time.Time, each func(p *decode.Packet)) time.Time {
	const (
		writeOnly = decode.Opcode(decode.TransportRC | decode.OpWriteOnly)
		readReq   = decode.Opcode(decode.TransportRC | decode.OpReadRequest)
		readOnly  = decode.Opcode(decode.TransportRC | decode.OpReadResponseOnly)
		ackOp     = decode.Opcode(decode.TransportRC | decode.OpAcknowledge)
		ackSyn    = 0x1f
	)
	var p decode.Packet
	data := make([]byte, 1024)
	for i := range n {
		h := byte(i % 64)
		req, resp := [4]byte{10, 2, h, 1}, [4]byte{10, 2, h, 2}
		qa, qb := uint32(0x1000+2*i), uint32(0x1001+2*i)
		for r := range rounds {
			psn := uint32(i*7919+2*r) & decode.PSNMask
			answer := time.Duration(1+r%8) * time.Microsecond
			steps := [4]struct {
				src, dst [4]byte
				qp       uint32
				op       decode.Opcode
				psn      uint32
			}{{req, resp, qb, writeOnly, psn}, {resp, req, qa, ackOp, psn}, {req, resp, qb, readReq, psn + 1}, {resp, req, qa, readOnly, psn + 1}}
			for k, st := range steps {
				if k%2 == 1 {
					at = at.Add(answer)
				} else {
					at = at.Add(time.Microsecond)
				}
				p = decode.Packet{Analysis: decode.Analysis{Acked: p.Analysis.Acked[:0]}}
				p.Frame = decode.Frame{Number: 4*(i*rounds+r) + k + 1, Time: at, Len: 1100}
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
				each(&p)
			}
		}
	}
	return at
}
