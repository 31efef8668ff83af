// Package pathcmp compares two captures of the same traffic taken at two
// points (a requester host and a responder host, or a host and a switch
// mirror): it matches every packet seen at both, estimates the clock
// offset and drift between the captures from the packets that went each
// way (as NTP does from its four timestamps), and finds per packet and
// per flow the one-way delay between the points, the packets lost
// between them, those reordered and those duplicated there.
//
// A packet is identified by its flow (source and destination address, BTH
// destination QP), its PSN, its opcode and its ICRC, which no switch or
// router may change (IBA 7.8.1). The ICRC is left out of the comparison
// when either capture lacks it (a frame cut by the snapshot length), and
// a PSN seen again (a retransmission, or a PSN reused after the 24-bit
// wrap) is told apart by time: copies are paired in time order, each
// downstream copy with the latest upstream copy sent before it, at most
// Options.Window earlier.
//
// Link-layer headers play no part, so the two captures may have
// different link types (a host's Linux cooked capture and a mirror's
// Ethernet), start and stop at different times, and hold traffic the other
// never saw.
package pathcmp

import (
	"net/netip"
	"strconv"
	"time"

	"github.com/rocetap/rocetap/decode"
	"github.com/rocetap/rocetap/flow"
	"github.com/rocetap/rocetap/stream"
)

// Points: the first capture given is A, the second B.
const (
	A uint8 = 0
	B uint8 = 1
)

// addr is a packet's source or destination: an IPv4 (mapped) or IPv6
// address, a GID, or for native InfiniBand without a GRH a LID.
type addr struct {
	b   [16]byte
	lid bool
}

func (a addr) String() string {
	if a.lid {
		return "lid:" + strconv.Itoa(int(a.b[14])<<8|int(a.b[15]))
	}
	return netip.AddrFrom16(a.b).Unmap().String()
}

// flowKey is one direction of a QP's traffic.
type flowKey struct {
	src, dst addr
	qp       uint32
}

// pair is a direction between two addresses.
type pair struct{ src, dst addr }

func (f flowKey) pair() pair { return pair{f.src, f.dst} }

// key identifies a packet, less its ICRC: its flow (an index into the
// comparison's table of flows), PSN and opcode.
type key struct {
	g   uint32
	psn uint32
	op  decode.Opcode
}

// rec is what pathcmp keeps of one frame, and what it found about it.
type rec struct {
	t       int64 // capture time, ns since the epoch, on its capture's clock
	ib      bool  // has a BTH and addresses: takes part
	hasICRC bool
	nak     bool // an AETH NAK
	op      decode.Opcode
	session uint32 // the flow tracker's session in this capture (rocetap sessions)
	psn     uint32
	icrc    uint32
	fl      uint32 // its flow: Capture.flows[fl]
	g       uint32 // its flow in the comparison's table (Compare sets it)

	// Results.
	status    decode.PathStatus
	dir       decode.PathDir
	peer      int32 // index of the same packet in the other capture, -1 none
	delay     int64 // ns, on both frames of a match
	reordered bool
	spike     bool
	naked     bool
}

// Capture is what pathcmp keeps of one capture: 56 bytes a frame, and
// its flows.
type Capture struct {
	Name        string
	recs        []rec
	flows       []flowKey
	flowID      map[flowKey]uint32
	first, last int64 // ns, of the frames with a BTH
	links       map[decode.LinkType]int
}

// Frames returns the number of frames read.
func (c *Capture) Frames() int { return len(c.recs) }

// Read reads a capture through src, decoding with dec (its CRC check may
// be off: the captured ICRC is compared, not the computed one), and
// tracks it as rocetap sessions does, so that each frame knows its
// session. name names it in reports.
func Read(name string, src *stream.Source, dec *decode.Decoder) (*Capture, error) {
	c := NewCapture(name)
	tr := flow.New(flow.Options{})
	_, err := src.Track(stream.TrackOptions{Decoder: dec, Pass: stream.Pass{Tracker: tr, Each: func(p *decode.Packet) bool {
		c.Add(p)
		return true
	}}})
	c.Resolve(tr.Resolve)
	return c, err
}

// add records one decoded frame.
func (c *Capture) add(p *decode.Packet) {
	r := rec{t: p.Frame.Time.UnixNano(), peer: -1}
	if src, dst, ok := addrs(p); ok && p.Has&decode.HdrBTH != 0 {
		r.ib = true
		f := flowKey{src, dst, p.BTH.DestQP}
		if c.flowID == nil {
			c.flowID = map[flowKey]uint32{}
		}
		id, ok := c.flowID[f]
		if !ok {
			id = uint32(len(c.flows))
			c.flows = append(c.flows, f)
			c.flowID[f] = id
		}
		r.fl = id
		r.op, r.psn = p.BTH.Opcode, uint32(p.BTH.PSN)
		if p.Has&decode.HdrICRC != 0 {
			r.hasICRC, r.icrc = true, p.ICRC.CRC
		}
		r.nak = p.Has&decode.HdrAETH != 0 && p.AETH.Kind() == decode.AETHNak
		r.session = p.Analysis.Session
		if c.first == 0 || r.t < c.first {
			c.first = r.t
		}
		c.last = max(c.last, r.t)
	}
	c.recs = append(c.recs, r)
}

// addrs returns a packet's source and destination: IP addresses (RoCEv2),
// GIDs (RoCEv1, InfiniBand with a GRH) or LIDs.
func addrs(p *decode.Packet) (src, dst addr, ok bool) {
	switch {
	case p.Has&decode.HdrIPv4 != 0:
		return addr{b: netip.AddrFrom4(p.IPv4.Src).As16()}, addr{b: netip.AddrFrom4(p.IPv4.Dst).As16()}, true
	case p.Has&decode.HdrIPv6 != 0:
		return addr{b: p.IPv6.Src}, addr{b: p.IPv6.Dst}, true
	case p.Has&decode.HdrGRH != 0:
		return addr{b: p.GRH.SGID}, addr{b: p.GRH.DGID}, true
	case p.Has&decode.HdrLRH != 0:
		s, d := addr{lid: true}, addr{lid: true}
		s.b[14], s.b[15] = byte(p.LRH.SLID>>8), byte(p.LRH.SLID)
		d.b[14], d.b[15] = byte(p.LRH.DLID>>8), byte(p.LRH.DLID)
		return s, d, true
	}
	return addr{}, addr{}, false
}

// Annotate sets p.Path to what the comparison found about frame
// p.Frame.Number of capture point (A or B); frames it did not look at
// (no BTH) get Compared false.
func (r *Result) Annotate(point uint8, p *decode.Packet) {
	p.Path = decode.Path{}
	c := r.caps[point&1]
	n := p.Frame.Number
	if n < 1 || n > len(c.recs) || !c.recs[n-1].ib {
		return
	}
	x := &c.recs[n-1]
	p.Path = decode.Path{Compared: true, Point: point, Dir: x.dir, Status: x.status,
		Reordered: x.reordered, Spike: x.spike, NAKed: x.naked}
	if x.peer >= 0 {
		p.Path.PeerFrame = int(x.peer) + 1
	}
	if x.status == decode.PathMatched {
		p.Path.Delay, p.Path.HasDelay = time.Duration(x.delay), true
	}
}

// Each reads capture point again through src (the same file Compare's
// capture came from), decodes and tracks each frame as Read did (so the
// rocetap.session.* and analysis fields are there too), annotates it
// (Annotate) and calls fn with it, in the capture's order.
func (r *Result) Each(point uint8, src *stream.Source, dec *decode.Decoder, fn func(p *decode.Packet) error) error {
	var ferr error
	_, err := src.Track(stream.TrackOptions{Decoder: dec, Pass: stream.Pass{Tracker: flow.New(flow.Options{}), Each: func(p *decode.Packet) bool {
		r.Annotate(point, p)
		ferr = fn(p)
		return ferr == nil
	}}})
	if ferr != nil {
		return ferr
	}
	return err
}
