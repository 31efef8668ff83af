package flow_test

// Benchmarks of the Tracker alone (no file I/O): one op is one packet, so
// ns/op is ns/packet and allocs/op allocations per packet.
//
//	go test -run XXX -bench Track -benchmem ./flow
//	go test -run XXX -bench Track/rc -benchmem -memprofile mem.out ./flow
//
// Track/rc is the steady state: a synthetic RC stream (8 QP pairs, RDMA
// WRITE, RDMA READ and SEND messages of 1 to 8 packets with 1 KiB payloads,
// each WRITE and SEND acknowledged, every READ answered), decoded once and
// replayed pass after pass with PSNs, frame numbers and timestamps moved on
// so that every pass continues the previous one (PSNs wrap at 2^24 in the
// first pass). Once the sessions, their request lists and latency
// histograms exist, Track should allocate nothing. Track/decode+rc adds
// decode.Decode (ICRC checked) in front, as in rocetap stats without the
// file reading.
//
// Track/rc+mpt is Track/rc with an MPT: every pair's responder is moved to
// one address, the MPT's responder, whose QPs and MRs allow every access
// of the stream, so each READ request and WRITE FIRST/ONLY is checked
// (translation cache included) and each response compared with the
// verdict. It too should allocate nothing.
//
// Track/rxe runs every capture in testdata/rxe (CM setup, NAKs, RNR NAKs,
// retransmissions, UD, ...) through a new Tracker per capture: it measures
// the mixed paths, including session setup and expert events (whose texts
// are built per event), so it allocates.

import (
	"encoding/binary"
	"io"
	"net"
	"net/netip"
	"path/filepath"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"

	"github.com/rocetap/rocetap/capture"
	"github.com/rocetap/rocetap/decode"
	"github.com/rocetap/rocetap/flow"
	"github.com/rocetap/rocetap/hca"
)

const (
	benchMTU  = 1024
	benchMask = 1<<24 - 1
)

// splitmix64, deterministic.
type benchRNG uint64

func (r *benchRNG) next() uint64 {
	*r += 0x9E3779B97F4A7C15
	z := uint64(*r)
	z = (z ^ z>>30) * 0xBF58476D1CE4E5B9
	z = (z ^ z>>27) * 0x94D049BB133111EB
	return z ^ z>>31
}

func (r *benchRNG) intn(n int) int { return int(r.next() % uint64(n)) }

type benchHost struct {
	mac  net.HardwareAddr
	ip   net.IP
	qpn  uint32
	port uint16
}

// benchFrame is one frame of the synthetic stream before interleaving.
type benchFrame struct {
	pair int
	data []byte
}

// rcStream is a decoded synthetic RC stream that can be replayed: pass j
// moves the PSNs of pair q on by j*span[q], frame numbers by j*len(pkts)
// and times by j*dur.
type rcStream struct {
	pkts []decode.Packet
	pair []int    // QP pair of each packet
	psn  []uint32 // PSN of each packet in pass 0
	num  []int
	at   []time.Time
	span []uint32 // PSNs pair q consumes per pass
	dur  time.Duration
	raw  [][]byte // the frames, for the decode benchmark
}

// set makes packet i the one of pass j.
func (s *rcStream) set(p *decode.Packet, i, j int) {
	p.BTH.PSN = decode.PSN((s.psn[i] + uint32(j)*s.span[s.pair[i]]) & benchMask)
	p.Frame.Number = s.num[i] + j*len(s.pkts)
	p.Frame.Time = s.at[i].Add(time.Duration(j) * s.dur)
}

// buildRC returns a synthetic RC stream of about perPair packets per QP
// pair over npairs pairs. Every message it starts, it finishes (with its
// ACK or READ responses) in the same pass.
func buildRC(tb testing.TB, npairs, perPair int) *rcStream {
	tb.Helper()
	r := benchRNG(1)
	var perPairFrames [][]benchFrame
	s := &rcStream{span: make([]uint32, npairs)}
	for q := 0; q < npairs; q++ {
		host := func(h int) benchHost {
			return benchHost{
				mac:  net.HardwareAddr{0x02, 0, 0x0a, byte(q / 4), byte(q % 4), byte(h)},
				ip:   net.IPv4(10, 1, byte(q/4), byte(1+h+2*(q%4))).To4(),
				qpn:  uint32(0x11 + 0x10*q + h),
				port: uint16(49152 + (q*7919+h*104729)%16384),
			}
		}
		req, resp := host(q%2), host(1-q%2)
		psn0 := uint32(benchMask-200-q*50) & benchMask // wraps in the first pass
		psn := psn0
		msn := uint32(0)
		va := uint64(0x7f3a00000000) + uint64(q)<<28
		rkey := 0x1000 + uint32(q)*0x101
		var fr []benchFrame
		add := func(src, dst benchHost, op int, psn uint32, ackReq bool, reth *decode.RETH, aeth *decode.AETH, payload int) {
			fr = append(fr, benchFrame{q, buildFrame(tb, src, dst, op, psn, ackReq, reth, aeth, payload)})
		}
		for len(fr) < perPair {
			n := 1
			if r.intn(4) != 0 {
				n = 2 + r.intn(7)
			}
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
					add(req, resp, op, (psn+uint32(i))&benchMask, i == n-1, reth, nil, benchMTU)
				}
				msn++
				add(resp, req, decode.OpAcknowledge, (psn+uint32(n-1))&benchMask, false, nil, &decode.AETH{Syndrome: 0x1f, MSN: msn & benchMask}, 0)
			case x < 7: // RDMA READ: request, then n responses
				add(req, resp, decode.OpReadRequest, psn, true, &decode.RETH{VA: va, RKey: rkey, DMALen: uint32(n) * benchMTU}, nil, 0)
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
					add(resp, req, op, (psn+uint32(i))&benchMask, false, nil, aeth, benchMTU)
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
					add(req, resp, op, (psn+uint32(i))&benchMask, i == n-1, nil, nil, benchMTU)
				}
				msn++
				add(resp, req, decode.OpAcknowledge, (psn+uint32(n-1))&benchMask, false, nil, &decode.AETH{Syndrome: 0x1f, MSN: msn & benchMask}, 0)
			}
			psn = (psn + uint32(n)) & benchMask
			va += uint64(n) * benchMTU
		}
		s.span[q] = (psn - psn0) & benchMask
		perPairFrames = append(perPairFrames, fr)
	}
	// Interleave the pairs, keeping each pair's order.
	next := make([]int, npairs)
	left := 0
	for _, fr := range perPairFrames {
		left += len(fr)
	}
	base := time.Unix(1767225600, 0)
	usec := 0
	dec := decode.NewDecoder()
	for left > 0 {
		q := r.intn(npairs)
		if next[q] == len(perPairFrames[q]) {
			continue
		}
		f := perPairFrames[q][next[q]]
		next[q]++
		left--
		usec += 1 + r.intn(2)
		var p decode.Packet
		p.Frame = decode.Frame{Number: len(s.pkts) + 1, Time: base.Add(time.Duration(usec) * time.Microsecond), Len: len(f.data)}
		dec.Decode(&p, f.data, decode.LinkTypeEthernet)
		if p.Has&decode.HdrBTH == 0 || p.ICRCStatus != decode.CRCGood {
			tb.Fatalf("synthetic frame %d: has %v, ICRC %v, err %v", len(s.pkts)+1, p.Has, p.ICRCStatus, p.Err)
		}
		s.pkts = append(s.pkts, p)
		s.pair = append(s.pair, q)
		s.psn = append(s.psn, uint32(p.BTH.PSN))
		s.num = append(s.num, p.Frame.Number)
		s.at = append(s.at, p.Frame.Time)
		s.raw = append(s.raw, f.data)
	}
	s.dur = time.Duration(usec+1) * time.Microsecond
	return s
}

// buildFrame serializes one RoCEv2 frame with a valid ICRC.
func buildFrame(tb testing.TB, src, dst benchHost, op int, psn uint32, ackReq bool, reth *decode.RETH, aeth *decode.AETH, payload int) []byte {
	eth := &layers.Ethernet{SrcMAC: src.mac, DstMAC: dst.mac, EthernetType: layers.EthernetTypeIPv4}
	ip := &layers.IPv4{Version: 4, IHL: 5, TTL: 64, Flags: layers.IPv4DontFragment, Protocol: layers.IPProtocolUDP, SrcIP: src.ip, DstIP: dst.ip}
	udp := &layers.UDP{SrcPort: layers.UDPPort(src.port), DstPort: layers.UDPPort(decode.RoCEv2Port)}
	bth := &decode.BTH{Opcode: decode.TransportRC.Opcode(uint8(op)), PKey: 0xffff, DestQP: dst.qpn, AckReq: ackReq, PSN: decode.PSN(psn)}
	ls := []gopacket.SerializableLayer{eth, ip, udp, bth}
	if reth != nil {
		ls = append(ls, reth)
	}
	if aeth != nil {
		ls = append(ls, aeth)
	}
	if payload > 0 {
		pl := make([]byte, payload)
		for i := range pl {
			pl[i] = byte(i)
		}
		ls = append(ls, gopacket.Payload(pl))
	}
	ls = append(ls, &decode.ICRC{})
	buf := gopacket.NewSerializeBuffer()
	if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{FixLengths: true}, ls...); err != nil {
		tb.Fatal(err)
	}
	frame := append([]byte(nil), buf.Bytes()...)
	binary.BigEndian.PutUint16(frame[14+10:], ipv4Checksum(frame[14:14+20]))
	if err := decode.FixCRCs(frame, decode.LinkTypeEthernet); err != nil {
		tb.Fatal(err)
	}
	return frame
}

func ipv4Checksum(h []byte) uint16 {
	var s uint32
	for i := 0; i < len(h); i += 2 {
		if i != 10 {
			s += uint32(h[i])<<8 | uint32(h[i+1])
		}
	}
	for s > 0xffff {
		s = s>>16 + s&0xffff
	}
	return ^uint16(s)
}

// rxeCaptures reads every testdata/rxe capture into decoded packets.
func rxeCaptures(tb testing.TB) [][]decode.Packet {
	tb.Helper()
	files, err := filepath.Glob("../testdata/rxe/*.pcap")
	if err != nil || len(files) == 0 {
		tb.Skipf("no testdata/rxe captures (%v)", err)
	}
	var caps [][]decode.Packet
	for _, f := range files {
		r, err := capture.Open(f)
		if err != nil {
			tb.Fatal(err)
		}
		var pkts []decode.Packet
		var first time.Time
		for {
			data, info, err := r.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				tb.Fatalf("%s: %v", f, err)
			}
			var p decode.Packet
			if len(pkts) == 0 {
				first = info.Timestamp
			}
			p.Frame = decode.Frame{Number: len(pkts) + 1, Time: info.Timestamp, TimeRelative: info.Timestamp.Sub(first), Len: info.Length}
			decode.Decode(&p, append([]byte(nil), data...), info.LinkType)
			pkts = append(pkts, p)
		}
		r.Close()
		caps = append(caps, pkts)
	}
	return caps
}

func BenchmarkTrack(b *testing.B) {
	b.Run("rc", func(b *testing.B) {
		s := buildRC(b, 8, 512)
		events := 0
		tr := flow.New(flow.Options{OnEvent: func(*flow.Event) { events++ }})
		// Warm up: two passes create the sessions, pair them, learn the
		// MTU and fill the latency histograms.
		n := len(s.pkts)
		for j := 0; j < 2; j++ {
			for i := range s.pkts {
				p := &s.pkts[i]
				s.set(p, i, j)
				tr.Track(p)
			}
		}
		events = 0
		b.ReportAllocs()
		b.ResetTimer()
		for k := 0; k < b.N; k++ {
			i := k % n
			p := &s.pkts[i]
			s.set(p, i, 2+k/n)
			tr.Track(p)
		}
		b.StopTimer()
		b.ReportMetric(float64(events)/float64(b.N), "events/pkt")
		if events != 0 {
			b.Errorf("%d expert events in the steady state of a clean stream (want 0)", events)
		}
	})
	b.Run("rc+mpt", func(b *testing.B) {
		s := buildRC(b, 8, 512)
		mpt := benchMPT(b, s)
		events := 0
		tr := flow.New(flow.Options{MPT: mpt, OnEvent: func(*flow.Event) { events++ }})
		n := len(s.pkts)
		for j := 0; j < 2; j++ {
			for i := range s.pkts {
				p := &s.pkts[i]
				s.set(p, i, j)
				tr.Track(p)
			}
		}
		events = 0
		b.ReportAllocs()
		b.ResetTimer()
		for k := 0; k < b.N; k++ {
			i := k % n
			p := &s.pkts[i]
			s.set(p, i, 2+k/n)
			tr.Track(p)
		}
		b.StopTimer()
		b.ReportMetric(float64(events)/float64(b.N), "events/pkt")
		if events != 0 {
			b.Errorf("%d expert events in the steady state of a clean stream (want 0)", events)
		}
		var checked uint64
		for _, ss := range tr.Sessions() {
			checked += ss.Findings().MPTChecked
		}
		if checked == 0 {
			b.Error("no access checked")
		}
	})
	for _, pre := range []bool{false, true} {
		name := "decode+rc"
		if pre {
			name += "+prefetch" // as stream.Track wires it
		}
		b.Run(name, func(b *testing.B) { benchDecodeTrack(b, pre) })
	}
	b.Run("rxe", func(b *testing.B) {
		caps := rxeCaptures(b)
		total := 0
		for _, c := range caps {
			total += len(c)
		}
		var tr *flow.Tracker
		c, i := 0, 0
		b.ReportAllocs()
		b.ResetTimer()
		for k := 0; k < b.N; k++ {
			if i == 0 {
				tr = flow.New(flow.Options{OnEvent: func(*flow.Event) {}})
			}
			tr.Track(&caps[c][i])
			if i++; i == len(caps[c]) {
				tr.Flush()
				i = 0
				if c++; c == len(caps) {
					c = 0
				}
			}
		}
		b.StopTimer()
		b.ReportMetric(float64(total), "pkts/pass")
	})
}

// benchResponder is the one responder of the rc+mpt stream.
var benchResponder = [4]byte{10, 9, 9, 9}

// benchMPT moves every pair's responder of the stream to benchResponder
// and returns a model of it that allows every access the stream makes.
func benchMPT(tb testing.TB, s *rcStream) *hca.Model {
	tb.Helper()
	f := &hca.Config{Responder: decode.NodeAddr(netip.AddrFrom4(benchResponder)), PDs: []hca.PDConfig{{ID: 1}}}
	resp := map[[4]byte]bool{}
	for i := range s.pkts {
		p := &s.pkts[i]
		if p.BTH.Opcode.IsRequest() {
			resp[p.IPv4.Dst] = true
		}
	}
	seen := map[uint32]bool{}
	remote := hca.RemoteWrite | hca.RemoteRead | hca.RemoteAtomic
	for i := range s.pkts {
		p := &s.pkts[i]
		if resp[p.IPv4.Dst] {
			p.IPv4.Dst = benchResponder
		}
		if resp[p.IPv4.Src] {
			p.IPv4.Src = benchResponder
		}
		if !p.BTH.Opcode.IsRequest() || seen[p.BTH.DestQP] {
			continue
		}
		seen[p.BTH.DestQP] = true
		q := s.pair[i]
		f.QPs = append(f.QPs, hca.QPConfig{QPN: p.BTH.DestQP, PD: 1, Type: decode.TransportRC, Access: remote, MTU: benchMTU})
		rkey := 0x1000 + uint32(q)*0x101
		f.MRs = append(f.MRs, hca.MRConfig{RKey: rkey, LKey: rkey, VA: uint64(0x7f3a00000000) + uint64(q)<<28, Length: 1 << 20, PD: 1,
			Access: hca.LocalWrite | remote})
	}
	m, err := hca.NewModel(f, hca.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	return m
}

// benchDecodeTrack decodes (ICRC checked) then tracks, one Packet reused
// as in rocetap stats; every pass re-decodes the same frames, so the PSNs
// are moved on after decoding. pre: the decoder calls Tracker.Prefetch.
func benchDecodeTrack(b *testing.B, pre bool) {
	s := buildRC(b, 8, 512)
	tr := flow.New(flow.Options{OnEvent: func(*flow.Event) {}})
	dec := decode.NewDecoder()
	if pre {
		dec.Headers = tr.Prefetch
	}
	var p decode.Packet
	n := len(s.pkts)
	step := func(k int) {
		i := k % n
		p.Frame = decode.Frame{Len: len(s.raw[i])}
		dec.Decode(&p, s.raw[i], decode.LinkTypeEthernet)
		s.set(&p, i, k/n)
		tr.Track(&p)
	}
	for k := 0; k < 2*n; k++ {
		step(k)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for k := 0; k < b.N; k++ {
		step(2*n + k)
	}
}
