package pathcmp

import (
	"encoding/binary"
	"testing"
	"time"

	"github.com/rocetap/rocetap/decode"
)

// captureOf builds a capture from fuzz input: 8 bytes a frame, read as
// point (1 bit), direction (1 bit), ICRC present (1 bit), NAK (1 bit),
// time step (12 bits, µs, signed: timestamps may go backwards), PSN (8
// bits), QP (4 bits), opcode (8 bits) and ICRC (4 bits).
func capturesOf(data []byte) [2]*Capture {
	caps := [2]*Capture{{Name: "a", links: map[decode.LinkType]int{}}, {Name: "b", links: map[decode.LinkType]int{}}}
	t := [2]time.Time{time.Unix(1e9, 0), time.Unix(1e9, 0)}
	var p decode.Packet
	for n := 1; len(data) >= 8; n++ {
		w := binary.BigEndian.Uint64(data)
		data = data[8:]
		pt := w >> 63
		step := time.Duration(int16(w>>44&0xFFF<<4)>>4) * time.Microsecond
		t[pt] = t[pt].Add(step)
		p = decode.Packet{}
		p.Frame.Time, p.Frame.Number = t[pt], len(caps[pt].recs)+1
		p.Has = decode.HdrIPv4 | decode.HdrBTH
		a, b := [4]byte{10, 0, 0, 1}, [4]byte{10, 0, 0, 2}
		if w>>62&1 == 1 {
			a, b = b, a
		}
		p.IPv4.Src, p.IPv4.Dst = a, b
		p.BTH.PSN = decode.PSN(w >> 36 & 0xFF)
		p.BTH.DestQP = uint32(w >> 32 & 0xF)
		p.BTH.Opcode = decode.Opcode(w >> 24 & 0xFF)
		if w>>61&1 == 1 {
			p.Has |= decode.HdrICRC
			p.ICRC.CRC = uint32(w >> 20 & 0xF)
		}
		if w>>60&1 == 1 {
			p.Has |= decode.HdrAETH
			p.AETH.Syndrome = 0x60
		}
		if w&0xFF == 0xFF {
			p.Has = 0 // not RDMA
		}
		caps[pt].add(&p)
	}
	return caps
}

// FuzzCompare runs the comparison on arbitrary pairs of captures (times
// out of order, keys repeated, one-way traffic): it must not panic, and
// every frame's annotation must be consistent.
func FuzzCompare(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{0x00, 0x01, 0x00, 0x00, 0x0a, 0x00, 0x00, 0x00, 0x80, 0x03, 0x00, 0x00, 0x0a, 0x00, 0x00, 0x00})
	f.Add([]byte{0x20, 0x01, 0x01, 0x10, 0x0a, 0x00, 0x00, 0x00, 0xa0, 0x03, 0x01, 0x10, 0x0a, 0x00, 0x00, 0x00,
		0xc0, 0x01, 0x01, 0x10, 0x11, 0x00, 0x00, 0x00, 0x40, 0x03, 0x01, 0x10, 0x11, 0x00, 0x00, 0x00})
	f.Fuzz(func(t *testing.T, data []byte) {
		caps := capturesOf(data)
		r := Compare(caps[0], caps[1], Options{Window: 50 * time.Millisecond})
		var p decode.Packet
		for pt := range caps {
			for i := range caps[pt].recs {
				p.Frame.Number = i + 1
				r.Annotate(uint8(pt), &p)
				x := &p.Path
				if !x.Compared {
					continue
				}
				if x.Status == decode.PathMatched {
					if x.PeerFrame < 1 || x.PeerFrame > len(caps[1-pt].recs) {
						t.Fatalf("point %d frame %d: matched to frame %d of %d", pt, i+1, x.PeerFrame, len(caps[1-pt].recs))
					}
					q := &caps[1-pt].recs[x.PeerFrame-1]
					if q.peer != int32(i) || q.status != decode.PathMatched {
						t.Fatalf("point %d frame %d: its peer %d does not match it back", pt, i+1, x.PeerFrame)
					}
				}
			}
		}
		for _, d := range []decode.PathDir{decode.PathAToB, decode.PathBToA} {
			Totals(r, d)
		}
	})
}

// TestManyCopiesOfOneKey: a flood of packets with one key (CNPs carry
// PSN 0), every other one lost between the points: each copy pairs with
// its own, in linear time.
func TestManyCopiesOfOneKey(t *testing.T) {
	const n = 20000
	var caps [2]*Capture
	for i := range caps {
		caps[i] = &Capture{Name: "ab"[i : i+1], links: map[decode.LinkType]int{}}
	}
	var p decode.Packet
	add := func(pt int, t time.Time, src, dst byte) {
		p = decode.Packet{}
		p.Frame.Time = t
		p.Has = decode.HdrIPv4 | decode.HdrBTH | decode.HdrICRC
		p.IPv4.Src, p.IPv4.Dst = [4]byte{10, 0, 0, src}, [4]byte{10, 0, 0, dst}
		p.BTH.Opcode, p.BTH.DestQP = 0x81, 7
		caps[pt].add(&p)
	}
	t0 := time.Unix(1e9, 0)
	for i := range n {
		ta := t0.Add(time.Duration(i) * 10 * time.Microsecond)
		add(0, ta, 1, 2) // a CNP from A's side
		if i%2 == 0 {
			add(1, ta.Add(3*time.Microsecond), 1, 2)
		}
		// Every 100th a packet with a key of its own, seen at both: the
		// keys seen once at each point give the direction.
		if i%100 == 0 {
			for pt, at := range []time.Time{ta, ta.Add(3 * time.Microsecond)} {
				p = decode.Packet{}
				p.Frame.Time = at
				p.Has = decode.HdrIPv4 | decode.HdrBTH
				p.IPv4.Src, p.IPv4.Dst = [4]byte{10, 0, 0, 1}, [4]byte{10, 0, 0, 2}
				p.BTH.Opcode, p.BTH.DestQP, p.BTH.PSN = 4, 9, decode.PSN(i)
				caps[pt].add(&p)
			}
		}
	}
	r := Compare(caps[0], caps[1], Options{})
	var cnp *Flow
	for _, f := range r.Flows {
		if f.DestQP == 7 {
			cnp = f
		}
	}
	// One way only: the clock is unknown, so the delay is B's time minus
	// A's, 3 µs for each pair.
	if cnp == nil || cnp.Matched != n/2 || cnp.Lost != n/2-1 && cnp.Lost != n/2 || cnp.Delay.Min != 3*time.Microsecond || cnp.Delay.Max != 3*time.Microsecond {
		t.Fatalf("CNP flow %+v: want %d matched and about %d lost", cnp, n/2, n/2)
	}
}
