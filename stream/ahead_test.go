package stream

import (
	"errors"
	"hash/crc32"
	"io"
	"runtime"
	"slices"
	"testing"

	"github.com/rocetap/rocetap/capture"
	"github.com/rocetap/rocetap/decode"
	"github.com/rocetap/rocetap/flow"
	"github.com/rocetap/rocetap/internal/synth"
)

// aheadCapture writes a pcap of pairs RC QP pairs between two hosts, two
// rounds: each pair a WRITE Only (its payload its own) and its ACK, then
// a READ and its READ Response Only, so that past the first ~25,000
// pairs the tracker's direction table outgrows the caches and Track
// decodes a packet ahead (trackSequential).
func aheadCapture(t *testing.T, pairs int) string {
	t.Helper()
	rc := func(op uint8) decode.Opcode { return decode.TransportRC.Opcode(op) }
	var pkts []refPacket
	add := func(s synth.RoCEv2) {
		b, lt, _, err := s.Build()
		if err != nil {
			t.Fatal(err)
		}
		pkts = append(pkts, refPacket{b, capture.PacketInfo{CaptureLength: len(b), Length: len(b), LinkType: lt}})
	}
	for round := range 2 {
		for i := range pairs {
			qa, qb := uint32(0x100+2*i), uint32(0x101+2*i)
			psn := decode.PSNOf(uint32(i*7919 + round))
			n := 16 + i%64*4
			pay := make([]byte, n)
			for k := range pay {
				pay[k] = byte(i + k)
			}
			if round == 0 {
				add(synth.RoCEv2{T: synth.Transport{BTH: decode.BTH{Opcode: rc(decode.OpWriteOnly), DestQP: qb, PSN: psn, AckReq: true, PadCount: uint8(-n & 3)}, RETH: decode.RETH{VA: 0x1000, RKey: 7, DMALen: uint32(n)}, Payload: pay}})
				add(synth.RoCEv2{Reverse: true, T: synth.Transport{BTH: decode.BTH{Opcode: rc(decode.OpAcknowledge), DestQP: qa, PSN: psn}, AETH: decode.AETH{Syndrome: 0x1f, MSN: 1}}})
				continue
			}
			add(synth.RoCEv2{T: synth.Transport{BTH: decode.BTH{Opcode: rc(decode.OpReadRequest), DestQP: qb, PSN: psn}, RETH: decode.RETH{VA: 0x1000, RKey: 7, DMALen: uint32(n)}}})
			add(synth.RoCEv2{Reverse: true, T: synth.Transport{BTH: decode.BTH{Opcode: rc(decode.OpReadResponseOnly), DestQP: qa, PSN: psn, PadCount: uint8(-n & 3)}, AETH: decode.AETH{Syndrome: 0x1f, MSN: 2}, Payload: pay}})
		}
	}
	path, _ := writePackets(t, pkts)
	return path
}

// seenPacket is what a pass saw of a packet: its session and direction,
// and its payload's bytes (a packet held while the next is read must
// keep them).
type seenPacket struct {
	frame, session uint32
	dir            decode.Direction
	payload        uint32 // CRC-32
}

func seen(p *decode.Packet) seenPacket {
	return seenPacket{uint32(p.Frame.Number), p.Analysis.Session, p.Analysis.Dir, crc32.ChecksumIEEE(p.Payload)}
}

// Track decodes a packet before it tracks the one before once the
// tracker prefetches (trackSequential): every packet of 30,000 QP pairs
// (19 MB, across the reader's refills of its 1 MiB buffer) gets the
// session, direction and payload that decoding and tracking each packet
// in turn gives, on one goroutine with and without the read-ahead, and
// with Track's reader goroutine (ROCETAP_WORKERS=2), which tracks each
// packet as it comes.
func TestTrackAhead(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	path := aheadCapture(t, 30000)
	r, err := capture.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	tr := flow.New(flow.Options{})
	dec := decode.NewDecoder()
	var ref []seenPacket
	var p decode.Packet
	for n := 1; ; n++ {
		data, info, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		p.Frame = decode.Frame{Number: n, Time: info.Timestamp, Len: info.Length}
		dec.Decode(&p, data, info.LinkType)
		tr.Track(&p)
		ref = append(ref, seen(&p))
	}
	for _, c := range []struct{ workers, readAhead string }{{"1", ""}, {"1", "1"}, {"2", ""}} {
		t.Setenv("ROCETAP_WORKERS", c.workers)
		t.Setenv("ROCETAP_READAHEAD", c.readAhead)
		tr := flow.New(flow.Options{})
		var got []seenPacket
		n, err := open(t, path).Track(TrackOptions{Decoder: decode.NewDecoder(), Pass: Pass{Tracker: tr, Each: func(p *decode.Packet) bool {
			got = append(got, seen(p))
			return true
		}}})
		if err != nil || n != len(ref) || !tr.Prefetching() {
			t.Fatalf("ROCETAP_WORKERS=%s ROCETAP_READAHEAD=%q: %d packets of %d, %v; the tracker prefetches: %v", c.workers, c.readAhead, n, len(ref), err, tr.Prefetching())
		}
		if i := slices.IndexFunc(got, func(s seenPacket) bool { return s != ref[s.frame-1] }); i >= 0 {
			t.Fatalf("ROCETAP_WORKERS=%s ROCETAP_READAHEAD=%q: packet %d: %+v, decoded and tracked in turn %+v", c.workers, c.readAhead, i+1, got[i], ref[got[i].frame-1])
		}
	}
}

// A packet held when the reading ends is still passed, once: StopAfter
// ends the reading on a packet held (the next is in the buffer), and
// Pass.Limit stops on one; a Stop from Each passes no packet after it; a
// capture cut in packet k+1 passes the k before it, then its
// *CorruptError.
func TestTrackAheadEnds(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	path := aheadCapture(t, 30000)
	const k = 100001 // past the ~50,000th packet, from which the tracker prefetches
	cut := cutCapture(t, path, k+1)
	for _, workers := range []string{"1", "2"} { // one goroutine (trackSequential), and a reader (trackBatches)
		t.Setenv("ROCETAP_WORKERS", workers)
		t.Run("ROCETAP_WORKERS="+workers, func(t *testing.T) { testTrackAheadEnds(t, path, cut, k) })
	}
}

func testTrackAheadEnds(t *testing.T, path, cut string, k int) {
	for _, c := range []string{"StopAfter", "Limit", "Stop from Each", "cut short"} {
		s := open(t, path)
		if c == "cut short" {
			s = open(t, cut)
		}
		var frames []int
		tr := flow.New(flow.Options{})
		o := TrackOptions{Decoder: decode.NewDecoder(), Pass: Pass{Tracker: tr, Each: func(p *decode.Packet) bool {
			frames = append(frames, p.Frame.Number)
			if c == "Stop from Each" && p.Frame.Number == k {
				s.Stop()
			}
			return true
		}}}
		switch c {
		case "StopAfter":
			s.StopAfter(k)
		case "Limit":
			o.Limit = k
		}
		n, err := s.Track(o)
		var ce *CorruptError
		if c == "cut short" && errors.As(err, &ce) && ce.Packets == k {
			err = nil // (the error expected)
		}
		bad := slices.ContainsFunc(frames, func(f int) bool { return f > len(frames) || frames[f-1] != f })
		if err != nil || n != k || len(frames) != k || bad || !tr.Prefetching() {
			t.Errorf("%s at packet %d: %d passed (%d seen, frames in order: %v), %v; the tracker prefetches: %v", c, k, n, len(frames), !bad, err, tr.Prefetching())
		}
	}
}
