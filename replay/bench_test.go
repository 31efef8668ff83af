package replay_test

// The replay hot path without file I/O or decoding: feed (Model.Receive,
// queueing the model's responses) and align (pairing, comparing, Observe).
// One op is one packet, so ns/op is ns per packet.
//
//	go test -run XXX -bench Replay -benchmem ./replay
//
// The stream is like the benchmark capture's (bench/run.sh, gencap -mpt):
// 8 RC QP pairs between one requester and one responder run RDMA WRITE,
// RDMA READ and SEND messages of 1 to 8 packets with 1 KiB payloads, each
// WRITE and SEND acknowledged and every READ answered. The data a WRITE
// carries and a READ returns come from one memory image per QP, so READ
// responses agree with what the model's memory holds: the replay must
// find no divergence. Pass after pass, PSNs, MSNs and frame numbers move
// on, so the model sees one long clean stream.

import (
	"net/netip"
	"testing"
	"time"

	"github.com/rocetap/rocetap/decode"
	"github.com/rocetap/rocetap/hca"
	"github.com/rocetap/rocetap/replay"
)

const (
	benchMTU  = 1024
	benchMask = 1<<24 - 1
	benchSpan = 1 << 20 // bytes of the MR each QP's messages cycle through
)

type benchRNG uint64

func (r *benchRNG) next() uint64 {
	*r += 0x9E3779B97F4A7C15
	z := uint64(*r)
	z = (z ^ z>>30) * 0xBF58476D1CE4E5B9
	z = (z ^ z>>27) * 0x94D049BB133111EB
	return z ^ z>>31
}

func (r *benchRNG) intn(n int) int { return int(r.next() % uint64(n)) }

// stream is one pass of a decoded RC stream and what moves per pass.
type stream struct {
	mpt   *hca.Config
	pkts  []decode.Packet
	pair  []int
	psn   []uint32 // pass 0
	msn   []uint32 // pass 0 (responses with an AETH)
	span  []uint32 // PSNs a pair uses per pass
	msgs  []uint32 // messages a pair completes per pass
	resp  decode.Node
	isReq []bool
}

// set makes packet i the one of pass j.
func (s *stream) set(i, j int) *decode.Packet {
	p := &s.pkts[i]
	q := s.pair[i]
	p.BTH.PSN = decode.PSN((s.psn[i] + uint32(j)*s.span[q]) & benchMask)
	if p.Has&decode.HdrAETH != 0 {
		p.AETH.MSN = (s.msn[i] + uint32(j)*s.msgs[q]) & benchMask
	}
	p.Frame.Number = i + 1 + j*len(s.pkts)
	return p
}

func buildStream(tb testing.TB, npairs, perPair int) *stream {
	tb.Helper()
	reqIP, respIP := netip.MustParseAddr("10.1.0.1"), netip.MustParseAddr("10.1.0.2")
	s := &stream{mpt: &hca.Config{Responder: decode.NodeAddr(respIP), PDs: []hca.PDConfig{{ID: 1}}},
		span: make([]uint32, npairs), msgs: make([]uint32, npairs), resp: decode.NodeAddr(respIP)}
	all := hca.LocalWrite | hca.RemoteWrite | hca.RemoteRead | hca.RemoteAtomic
	type frame struct {
		p     decode.Packet
		psn   uint32
		msn   uint32
		isReq bool
	}
	perPairFrames := make([][]frame, npairs)
	r := benchRNG(1)
	for q := 0; q < npairs; q++ {
		reqQPN, respQPN := uint32(0x11+0x10*q), uint32(0x12+0x10*q)
		psn0 := uint32(benchMask-200-q*50) & benchMask
		rkey := 0x1000 + uint32(q)*0x101
		base := uint64(0x7f3a00000000) + uint64(q)<<28
		image := make([]byte, benchSpan+8*benchMTU)
		ir := benchRNG(uint64(q) + 100)
		for i := 0; i < len(image); i += 8 {
			v := ir.next()
			for k := 0; k < 8; k++ {
				image[i+k] = byte(v >> (8 * k))
			}
		}
		s.mpt.QPs = append(s.mpt.QPs, hca.QPConfig{QPN: respQPN, PD: 1, Type: decode.TransportRC, Access: all, MTU: benchMTU,
			ExpectedPSN: decode.PSN(psn0), HasExpectedPSN: true, Remote: &hca.Peer{Addr: decode.NodeAddr(reqIP), QPN: reqQPN}})
		s.mpt.MRs = append(s.mpt.MRs, hca.MRConfig{RKey: rkey, LKey: rkey, VA: base, Length: uint64(len(image)), PD: 1, Access: all})
		psn, msn := psn0, uint32(0)
		off := uint64(0)
		var fr []frame
		add := func(toResp bool, op int, psn uint32, ackReq bool, reth *decode.RETH, aeth *decode.AETH, payload []byte) {
			var f frame
			p := &f.p
			p.Has = decode.HdrEth | decode.HdrIPv4 | decode.HdrUDP | decode.HdrBTH | decode.HdrICRC
			p.Encap = decode.EncapRoCEv2
			p.ICRCStatus = decode.CRCGood
			src, dst, destQP := reqIP, respIP, respQPN
			if !toResp {
				src, dst, destQP = respIP, reqIP, reqQPN
			}
			p.IPv4.Src, p.IPv4.Dst = src.As4(), dst.As4()
			p.BTH = decode.BTH{Opcode: decode.Opcode(int(decode.TransportRC) | op), PKey: 0xFFFF, DestQP: destQP, AckReq: ackReq, PSN: decode.PSN(psn)}
			if reth != nil {
				p.Has |= decode.HdrRETH
				p.RETH = *reth
			}
			if aeth != nil {
				p.Has |= decode.HdrAETH
				p.AETH = *aeth
				f.msn = aeth.MSN
			}
			p.Payload = payload
			f.psn, f.isReq = psn, toResp
			fr = append(fr, f)
		}
		for len(fr) < perPair {
			n := 1
			if r.intn(4) != 0 {
				n = 2 + r.intn(7)
			}
			va := base + off
			data := image[off : off+uint64(n)*benchMTU]
			switch x := r.intn(10); {
			case x < 4: // RDMA WRITE + ACK
				for i := 0; i < n; i++ {
					op, reth := decode.OpWriteMiddle, (*decode.RETH)(nil)
					switch {
					case n == 1:
						op = decode.OpWriteOnly
					case i == 0:
						op = decode.OpWriteFirst
					case i == n-1:
						op = decode.OpWriteLast
					}
					if i == 0 {
						reth = &decode.RETH{VA: va, RKey: rkey, DMALen: uint32(n) * benchMTU}
					}
					add(true, op, (psn+uint32(i))&benchMask, i == n-1, reth, nil, data[i*benchMTU:(i+1)*benchMTU])
				}
				msn++
				add(false, decode.OpAcknowledge, (psn+uint32(n-1))&benchMask, false, nil, &decode.AETH{Syndrome: 0x1f, MSN: msn & benchMask}, nil)
			case x < 7: // RDMA READ: request, then n responses
				add(true, decode.OpReadRequest, psn, true, &decode.RETH{VA: va, RKey: rkey, DMALen: uint32(n) * benchMTU}, nil, nil)
				msn++
				for i := 0; i < n; i++ {
					op, aeth := decode.OpReadResponseMiddle, (*decode.AETH)(nil)
					switch {
					case n == 1:
						op = decode.OpReadResponseOnly
					case i == 0:
						op = decode.OpReadResponseFirst
					case i == n-1:
						op = decode.OpReadResponseLast
					}
					if op != decode.OpReadResponseMiddle {
						aeth = &decode.AETH{Syndrome: 0x1f, MSN: msn & benchMask}
					}
					add(false, op, (psn+uint32(i))&benchMask, false, nil, aeth, data[i*benchMTU:(i+1)*benchMTU])
				}
			default: // SEND + ACK
				if n > 3 {
					n = 1 + n%3
				}
				for i := 0; i < n; i++ {
					op := decode.OpSendMiddle
					switch {
					case n == 1:
						op = decode.OpSendOnly
					case i == 0:
						op = decode.OpSendFirst
					case i == n-1:
						op = decode.OpSendLast
					}
					add(true, op, (psn+uint32(i))&benchMask, i == n-1, nil, nil, data[i*benchMTU:(i+1)*benchMTU])
				}
				msn++
				add(false, decode.OpAcknowledge, (psn+uint32(n-1))&benchMask, false, nil, &decode.AETH{Syndrome: 0x1f, MSN: msn & benchMask}, nil)
			}
			psn = (psn + uint32(n)) & benchMask
			off = (off + uint64(n)*benchMTU) % benchSpan
		}
		s.span[q] = (psn - psn0) & benchMask
		s.msgs[q] = msn
		perPairFrames[q] = fr
	}
	// Interleave the pairs, keeping each pair's order.
	next := make([]int, npairs)
	left := 0
	for _, fr := range perPairFrames {
		left += len(fr)
	}
	t0 := time.Unix(1767225600, 0)
	for left > 0 {
		q := r.intn(npairs)
		if next[q] == len(perPairFrames[q]) {
			continue
		}
		f := perPairFrames[q][next[q]]
		next[q]++
		left--
		f.p.Frame.Time = t0.Add(time.Duration(len(s.pkts)) * time.Microsecond)
		s.pkts = append(s.pkts, f.p)
		s.pair = append(s.pair, q)
		s.psn = append(s.psn, f.psn)
		s.msn = append(s.msn, f.msn)
		s.isReq = append(s.isReq, f.isReq)
	}
	return s
}

func newBenchReplayer(tb testing.TB, s *stream) *replay.Replayer {
	tb.Helper()
	m, err := hca.NewModel(s.mpt, hca.Options{Profile: hca.ProfileIBTA})
	if err != nil {
		tb.Fatal(err)
	}
	rp, err := replay.New(m, replay.Options{Responder: s.resp, QPs: s.mpt.QPs, MaxDivergences: 10, MaxCompletions: 10})
	if err != nil {
		tb.Fatal(err)
	}
	return rp
}

func checkClean(tb testing.TB, rep *replay.Report) {
	tb.Helper()
	for _, d := range rep.Divergences {
		tb.Errorf("%s", d.Message)
	}
	if rep.DivergenceCount != 0 || rep.Compared != rep.CapturedResponses || rep.Compared == 0 {
		tb.Fatalf("%d divergences, %d of %d responses compared", rep.DivergenceCount, rep.Compared, rep.CapturedResponses)
	}
}

// TestBenchStreamIsClean: the benchmark's stream replays without a
// divergence over several passes (PSNs wrap at 2^24 in the first).
func TestBenchStreamIsClean(t *testing.T) {
	s := buildStream(t, 8, 500)
	rp := newBenchReplayer(t, s)
	for j := 0; j < 3; j++ {
		for i := range s.pkts {
			rp.Feed(s.set(i, j))
		}
	}
	checkClean(t, rp.Finish())
}

// TestFeedNoAllocs: once the sessions' queues have grown, a pass of the
// stream (requests, model responses, captured responses) allocates
// nothing in replay.
func TestFeedNoAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	s := buildStream(t, 8, 500)
	rp := newBenchReplayer(t, s)
	pass := 0
	feedPass := func() {
		for i := range s.pkts {
			rp.Feed(s.set(i, pass))
		}
		pass++
	}
	feedPass()
	feedPass()
	if n := testing.AllocsPerRun(5, feedPass); n != 0 {
		t.Errorf("%.0f allocations per pass of %d packets, want 0", n, len(s.pkts))
	}
	checkClean(t, rp.Finish())
}

var sinkReport *replay.Report

func BenchmarkReplay(b *testing.B) {
	s := buildStream(b, 8, 500)
	b.Run("rc", func(b *testing.B) {
		rp := newBenchReplayer(b, s)
		b.ReportAllocs()
		b.ResetTimer()
		n := len(s.pkts)
		for i := 0; i < b.N; i++ {
			rp.Feed(s.set(i%n, i/n))
		}
		b.StopTimer()
		for i := b.N; i%n != 0; i++ { // finish the pass: every message answered
			rp.Feed(s.set(i%n, i/n))
		}
		sinkReport = rp.Finish()
		checkClean(b, sinkReport)
	})
}
