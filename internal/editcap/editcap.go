// Package editcap injects faults into a capture, for testing the flow
// tracker: it drops, duplicates and swaps frames like editcap -d and -D,
// and with go-back-N it emulates what an RC responder and requester do
// after a request is lost (IBTA 9.7.5: a NAK PSN sequence error, then the
// retransmission of everything from the lost PSN).
//
// Frame numbers are 1-based and always those of the input capture. The
// Report says where every fault ended up in the output.
package editcap

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/rocetap/rocetap/capture"
	"github.com/rocetap/rocetap/decode"
	"github.com/rocetap/rocetap/internal/outfile"
	"github.com/rocetap/rocetap/stream"
)

// Frame is one captured packet: what the capture file says about it and
// its bytes. Info.LinkType is the frame's link type.
type Frame struct {
	Info capture.PacketInfo
	Data []byte
}

// Read reads a whole capture (pcap, pcapng or ERF) into memory and returns
// its frames and their link type. Every frame must have the same link type,
// since Write writes pcap.
func Read(path string) ([]Frame, decode.LinkType, error) {
	src, err := stream.Open(path, "", nil) // "-": standard input, as capture.Open reads it
	if err != nil {
		return nil, 0, err
	}
	defer src.Close()
	var (
		frames []Frame
		link   decode.LinkType
	)
	err = src.Read(func(pk *stream.Packet) error {
		if len(frames) == 0 {
			link = pk.Info.LinkType
		} else if pk.Info.LinkType != link {
			return fmt.Errorf("%s: frame %d has link type %d but frame 1 has %d: a pcap holds one link type; split the capture by interface first",
				path, pk.Number, pk.Info.LinkType, link)
		}
		frames = append(frames, Frame{Info: pk.Info, Data: bytes.Clone(pk.Data)})
		return nil
	})
	if err != nil {
		return nil, 0, err
	}
	return frames, link, nil
}

// Write writes frames to the pcap file path (replacing it; the file
// appears only once complete, see internal/outfile).
func Write(path string, frames []Frame, linkType decode.LinkType) error {
	f, err := outfile.Create(path, outfile.Options{Force: true})
	if err != nil {
		return err
	}
	defer f.Abort()
	if err := WritePcap(f, path, frames, linkType); err != nil {
		return err
	}
	return f.Commit()
}

// WritePcap writes frames as a pcap file with the given link type to w;
// name names it in errors. Timestamps are written in nanoseconds when
// some frame's timestamp has a fraction of a microsecond, in microseconds
// otherwise.
func WritePcap(w io.Writer, name string, frames []Frame, linkType decode.LinkType) error {
	nano := false
	snaplen := 0
	for i, f := range frames {
		if f.Info.LinkType != linkType {
			return fmt.Errorf("write %s: frame %d has link type %d, not %d", name, i+1, f.Info.LinkType, linkType)
		}
		if f.Info.Timestamp.Nanosecond()%1000 != 0 {
			nano = true
		}
		snaplen = max(snaplen, len(f.Data))
	}
	if snaplen <= 262144 {
		snaplen = 0 // the standard snapshot length
	}
	bw := bufio.NewWriter(w)
	pw, err := capture.NewPcapWriter(bw, linkType, snaplen, nano)
	if err != nil {
		return err
	}
	for i, f := range frames {
		if err := pw.WritePacket(f.Info, f.Data); err != nil {
			return fmt.Errorf("write %s: frame %d: %w", name, i+1, err)
		}
	}
	return bw.Flush()
}

// Ops are the faults to inject. Frame numbers are 1-based numbers of the
// input capture; a frame may take part in one fault only.
type Ops struct {
	Drop []int // remove these frames
	Dup  []int // insert an exact copy right after each of these frames
	Swap []int // exchange frame N and frame N+1
	// GoBackN turns the drop of an RC request into a lost packet that the
	// responder and requester recover from (see Apply). Drops of other
	// packets stay plain drops.
	GoBackN bool
	// TimeShift and TimeDriftPPM move every output timestamp t to
	// t + TimeShift + (t − t0)·TimeDriftPPM·1e-6, t0 the first input
	// frame's time: a clock TimeShift ahead at the start that gains
	// TimeDriftPPM parts per million (editcap -t has the shift only).
	TimeShift    time.Duration
	TimeDriftPPM float64
}

// Report says what Apply did. Input and output frame numbers are 1-based.
type Report struct {
	InFrames, OutFrames int

	Drops      []int // input frames removed, ascending (go-back-N's lost requests included)
	Dups       []Dup
	Swaps      []Swap
	Recoveries []Recovery // one per go-back-N loss, by input number of the first lost frame
	// TimeShift and TimeDriftPPM are the Ops' (zero when not asked for).
	TimeShift    time.Duration
	TimeDriftPPM float64

	out []int // out[i] = output number of input frame i (0: dropped)
}

// Dup is one duplicated frame.
type Dup struct {
	In   int // input frame
	Out  int // output number of the original
	Copy int // output number of the copy (Out+1)
}

// Swap is one swap of input frames In and In+1.
type Swap struct {
	In  int
	Out [2]int // output numbers of input frames In and In+1 (Out[0] = Out[1]+1)
}

// Recovery is a lost RC request and what the emulated requester and
// responder did about it. The stream is Src -> Dst, BTH dest QP DestQP.
type Recovery struct {
	Src, Dst netip.Addr // requester and responder IP
	DestQP   uint32     // the responder's QP (BTH dest QP of the requests)
	// RequesterQP is the requester's QP (BTH dest QP of the responses),
	// learned from the capture's responses; 0 when a timeout recovery
	// found none.
	RequesterQP uint32
	PSN         decode.PSN // PSN of the first lost request: the NAK's PSN
	Lost        []int      // input frames of the stream's dropped requests, in PSN order

	// Timeout is set for a tail drop: no later request of the stream
	// showed the gap, so the requester timed out and retransmitted the
	// lost requests after the last frame of the capture (Trigger, NAK,
	// NAKMSN and Template are then 0).
	Timeout bool
	Trigger int // input frame of the first later request of the stream, after which the NAK is inserted
	// TriggerOut is the output number of the Trigger frame (0 on timeout).
	TriggerOut int
	NAK        int    // output number of the synthesized NAK (right after TriggerOut)
	NAKMSN     uint32 // MSN the NAK carries
	Template   int    // input frame (a response of the connection) the NAK was built from

	Retransmits []Copy // output frames resent by the requester, in PSN order
	Moved       []Copy // responses that moved after the retransmissions, in input order
}

// Copy is one frame of a recovery: input frame In placed at output number
// Out. PSN is its BTH PSN.
type Copy struct {
	In, Out int
	PSN     decode.PSN
}

// OutNumber returns the output number of input frame in (for a moved
// response its new place), or 0 when it was dropped or is out of range.
func (r *Report) OutNumber(in int) int {
	if in < 1 || in >= len(r.out) {
		return 0
	}
	return r.out[in]
}

// String describes the edits, one line per fault, with input ("in") and
// output ("out") frame numbers.
func (r *Report) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "read %d frames, wrote %d\n", r.InFrames, r.OutFrames)
	lost := map[int]bool{}
	for _, rc := range r.Recoveries {
		for _, l := range rc.Lost {
			lost[l] = true
		}
	}
	for _, d := range r.Drops {
		if !lost[d] {
			fmt.Fprintf(&b, "drop  in %d\n", d)
		}
	}
	for _, d := range r.Dups {
		fmt.Fprintf(&b, "dup   in %d -> out %d, copy out %d\n", d.In, d.Out, d.Copy)
	}
	for _, s := range r.Swaps {
		fmt.Fprintf(&b, "swap  in %d,%d -> out %d,%d\n", s.In, s.In+1, s.Out[0], s.Out[1])
	}
	for _, rc := range r.Recoveries {
		fmt.Fprintf(&b, "go-back-n: lost in %s (%s -> %s QP %#06x, PSN %d)\n", joinInts(rc.Lost), rc.Src, rc.Dst, rc.DestQP, rc.PSN)
		if rc.Timeout {
			fmt.Fprintf(&b, "  no later request of the stream: requester times out\n")
		} else {
			fmt.Fprintf(&b, "  in %d -> out %d shows the gap\n", rc.Trigger, rc.TriggerOut)
			fmt.Fprintf(&b, "  out %d  NAK PSN sequence error, PSN %d, MSN %d, to QP %#06x (built from in %d)\n", rc.NAK, rc.PSN, rc.NAKMSN, rc.RequesterQP, rc.Template)
		}
		for _, c := range rc.Retransmits {
			fmt.Fprintf(&b, "  out %d  retransmit in %d, PSN %d\n", c.Out, c.In, c.PSN)
		}
		for _, c := range rc.Moved {
			fmt.Fprintf(&b, "  out %d  response in %d (PSN %d) moved after the retransmission\n", c.Out, c.In, c.PSN)
		}
	}
	if r.TimeShift != 0 || r.TimeDriftPPM != 0 {
		fmt.Fprintf(&b, "time  shifted by %s, drift %g ppm from the first frame\n", r.TimeShift, r.TimeDriftPPM)
	}
	return b.String()
}

func joinInts(v []int) string {
	s := make([]string, len(v))
	for i, n := range v {
		s[i] = fmt.Sprint(n)
	}
	return strings.Join(s, ",")
}

// Synthesized frames are spaced this far apart, and a requester's timeout
// retransmission comes this long after the last frame.
const (
	step    = time.Microsecond
	timeout = 10 * time.Millisecond
)

// Apply injects ops into frames (which it does not modify) and returns the
// new frames and what it did.
//
//   - Drop N removes frame N.
//   - Dup N inserts a copy of frame N right after it, 1 µs later.
//   - Swap N exchanges frames N and N+1; timestamps stay in position order,
//     so the packets look as if they arrived reordered.
//
// With GoBackN, the drop of an RC request with PSN p of the stream S =
// (IP source, IP destination, BTH dest QP) (RoCEv2) becomes a loss: after
// the first later request k of S, Apply inserts a NAK (RC Acknowledge,
// AETH syndrome 0x60, PSN p, the MSN of the responder's last AETH on the
// connection) built from a response of the connection, then copies of S's
// requests from p through k in PSN order, then the responses to PSNs >= p
// of S that stood between the lost frame and k (the responder answers only
// the retransmission). Drops of S's requests before k are part of the same
// loss. Without a later request the requester times out: copies of the
// lost requests are appended 10 ms after the last frame, followed by the
// responses to them. When the first later request resends PSN p or an
// older one, the capture recovers by itself and the drop stays a plain
// drop.
//
// Synthesized frames are 1 µs apart, but never later than the next
// original frame, so timestamps stay non-decreasing.
func Apply(frames []Frame, ops Ops) ([]Frame, *Report, error) {
	claims, err := checkOps(len(frames), ops)
	if err != nil {
		return nil, nil, err
	}
	n := len(frames)
	rep := &Report{InFrames: n, out: make([]int, n+1)}
	dropped := make([]bool, n)
	for _, d := range ops.Drop {
		dropped[d-1] = true
		rep.Drops = append(rep.Drops, d)
	}
	sort.Ints(rep.Drops)

	var (
		recs []*recovery
		pk   []pkt
	)
	if ops.GoBackN {
		pk = decodeAll(frames)
		if recs, err = findRecoveries(frames, pk, dropped, rep.Drops); err != nil {
			return nil, nil, err
		}
		for _, rc := range recs {
			if err := checkClaims(rc, claims); err != nil {
				return nil, nil, err
			}
		}
	}
	removed := slices.Clone(dropped)
	after := map[int][]item{} // insertions after an input index
	var tail []item
	for _, rc := range recs {
		items := rc.items(frames, rep.out)
		for _, m := range rc.moved {
			removed[m] = true
		}
		if rc.Timeout {
			tail = append(tail, items...)
		} else {
			after[rc.trigger] = items
		}
	}

	// src[i] is the input index whose bytes go to position i.
	src := make([]int, n)
	for i := range src {
		src[i] = i
	}
	for _, s := range ops.Swap {
		src[s-1], src[s] = s, s-1
	}
	isDup := make([]bool, n)
	for _, d := range ops.Dup {
		isDup[d-1] = true
	}

	var out []item
	for i, s := range src {
		if removed[s] {
			continue
		}
		f := frames[s]
		f.Info.Timestamp = frames[i].Info.Timestamp
		out = append(out, item{f: f, in: s + 1, fixed: true, num: &rep.out[s+1]})
		if isDup[s] {
			d := Dup{In: s + 1}
			rep.Dups = append(rep.Dups, d)
			out = append(out, item{f: frames[s], in: s + 1, step: step})
		}
		out = append(out, after[s]...)
	}
	out = append(out, tail...)

	var last time.Time
	for _, f := range frames {
		if f.Info.Timestamp.After(last) {
			last = f.Info.Timestamp
		}
	}
	setTimes(out, last)

	res := make([]Frame, len(out))
	for i, it := range out {
		res[i] = it.f
		if it.num != nil {
			*it.num = i + 1
		}
	}
	rep.OutFrames = len(res)
	if (ops.TimeShift != 0 || ops.TimeDriftPPM != 0) && n > 0 {
		shiftTimes(res, frames[0].Info.Timestamp, ops.TimeShift, ops.TimeDriftPPM)
		rep.TimeShift, rep.TimeDriftPPM = ops.TimeShift, ops.TimeDriftPPM
	}
	for i := range rep.Dups {
		d := &rep.Dups[i]
		d.Out = rep.out[d.In]
		d.Copy = d.Out + 1
	}
	sort.Slice(rep.Dups, func(i, j int) bool { return rep.Dups[i].In < rep.Dups[j].In })
	for _, s := range ops.Swap {
		rep.Swaps = append(rep.Swaps, Swap{In: s, Out: [2]int{rep.out[s], rep.out[s+1]}})
	}
	sort.Slice(rep.Swaps, func(i, j int) bool { return rep.Swaps[i].In < rep.Swaps[j].In })
	for _, rc := range recs {
		if !rc.Timeout {
			rc.TriggerOut = rep.out[rc.Trigger]
		}
		for i := range rc.Moved {
			rc.Moved[i].Out = rep.out[rc.Moved[i].In]
		}
		rep.Recoveries = append(rep.Recoveries, rc.Recovery)
	}
	return res, rep, nil
}

// item is one output frame.
type item struct {
	f     Frame
	in    int  // input frame whose bytes these are (0 for a NAK)
	fixed bool // keeps f.Info.Timestamp
	// step is a synthesized frame's distance from the previous frame;
	// tail means from the latest timestamp of the capture.
	step time.Duration
	tail bool
	num  *int // where to store the output number
}

// setTimes gives synthesized frames their timestamps: step after the
// previous frame, but no later than the next original frame and no earlier
// than the previous one.
func setTimes(out []item, last time.Time) {
	next := make([]time.Time, len(out))
	var nt time.Time
	for i := len(out) - 1; i >= 0; i-- {
		next[i] = nt
		if out[i].fixed {
			nt = out[i].f.Info.Timestamp
		}
	}
	var prev time.Time
	for i := range out {
		it := &out[i]
		if it.fixed {
			prev = it.f.Info.Timestamp
			continue
		}
		base := prev
		if it.tail && base.Before(last) {
			base = last
		}
		t := base.Add(it.step)
		if !next[i].IsZero() && t.After(next[i]) {
			t = next[i]
		}
		if t.Before(prev) {
			t = prev
		}
		it.f.Info.Timestamp = t
		prev = t
	}
}

// claim is the option that claimed a frame, as the CLI spells it.
type claim struct {
	op  string // "drop", "dup", "swap"
	arg int
}

func (c claim) String() string { return fmt.Sprintf("--%s %d", c.op, c.arg) }

func (c claim) long() string {
	if c.op == "swap" {
		return fmt.Sprintf("--swap %d (which exchanges frames %d and %d)", c.arg, c.arg, c.arg+1)
	}
	return c.String()
}

// checkOps checks the frame numbers and returns which option claimed each
// frame.
func checkOps(n int, ops Ops) (map[int]claim, error) {
	claims := map[int]claim{}
	add := func(frame int, c claim) error {
		if prev, ok := claims[frame]; ok {
			if prev == c {
				return fmt.Errorf("%s: frame %d is given twice; give it once", c, c.arg)
			}
			return fmt.Errorf("frame %d is in both %s and %s: give each frame one fault (run rocetap edit again on the output to combine them)",
				frame, prev.long(), c.long())
		}
		claims[frame] = c
		return nil
	}
	check := func(c claim) error {
		switch {
		case n == 0:
			return fmt.Errorf("%s: the capture has no frames", c)
		case c.arg < 1 || c.arg > n:
			return fmt.Errorf("%s: no such frame: the capture has %d frames, numbered 1 to %d", c, n, n)
		}
		return nil
	}
	for _, l := range []struct {
		op   string
		nums []int
	}{{"drop", ops.Drop}, {"dup", ops.Dup}, {"swap", ops.Swap}} {
		for _, f := range l.nums {
			c := claim{l.op, f}
			if err := check(c); err != nil {
				return nil, err
			}
			if err := add(f, c); err != nil {
				return nil, err
			}
			if l.op != "swap" {
				continue
			}
			if f == n {
				if n == 1 {
					return nil, fmt.Errorf("%s: the capture has only one frame, there is nothing to swap it with", c)
				}
				return nil, fmt.Errorf("%s: frame %d is the last frame, there is no frame %d to swap it with; --swap %d exchanges frames %d and %d",
					c, f, f+1, f-1, f-1, f)
			}
			if err := add(f+1, c); err != nil {
				return nil, err
			}
		}
	}
	return claims, nil
}

// checkClaims rejects a dup or swap of a frame that a go-back-N recovery
// moves or uses as its trigger.
func checkClaims(rc *recovery, claims map[int]claim) error {
	what := func(in int, role string) error {
		if c, ok := claims[in]; ok && c.op != "drop" {
			return fmt.Errorf("%s: frame %d %s of the go-back-N recovery of dropped frame %d; choose another frame, or run rocetap edit again on the output",
				c.long(), in, role, rc.Lost[0])
		}
		return nil
	}
	if !rc.Timeout {
		if err := what(rc.Trigger, "is the request that triggers the NAK"); err != nil {
			return err
		}
	}
	for _, m := range rc.Moved {
		if err := what(m.In, "is a response that moves after the retransmission"); err != nil {
			return err
		}
	}
	return nil
}

// pkt is what go-back-N needs to know about a frame.
type pkt struct {
	roce     bool // RoCEv2 with a BTH
	bth      bool // has a BTH (any encapsulation)
	src, dst netip.Addr
	op       decode.Opcode
	qp       uint32
	psn      decode.PSN
	aeth     bool
	msn      uint32
}

func (p *pkt) rc() bool          { return p.bth && p.op.Transport() == decode.TransportRC }
func (p *pkt) rcRequest() bool   { return p.rc() && p.op.IsRequest() }
func (p *pkt) rcResponse() bool  { return p.roce && p.rc() && p.op.IsResponse() }
func (p *pkt) stream() streamKey { return streamKey{p.src, p.dst, p.qp} }
func (p *pkt) answers(s streamKey) bool {
	return p.rcResponse() && p.src == s.dst && p.dst == s.src
}

type streamKey struct {
	src, dst netip.Addr
	qp       uint32
}

func decodeAll(frames []Frame) []pkt {
	dec := decode.NewDecoder()
	var p decode.Packet
	out := make([]pkt, len(frames))
	for i, f := range frames {
		p.Frame.Len = f.Info.Length
		dec.Decode(&p, f.Data, f.Info.LinkType)
		k := &out[i]
		if p.Has&decode.HdrBTH == 0 {
			continue
		}
		k.bth = true
		k.op, k.qp, k.psn = p.BTH.Opcode, p.BTH.DestQP, p.BTH.PSN
		if p.Has&decode.HdrAETH != 0 {
			k.aeth, k.msn = true, p.AETH.MSN
		}
		if p.Encap != decode.EncapRoCEv2 {
			continue
		}
		switch {
		case p.Has&decode.HdrIPv4 != 0:
			k.src, k.dst = netip.AddrFrom4(p.IPv4.Src), netip.AddrFrom4(p.IPv4.Dst)
		case p.Has&decode.HdrIPv6 != 0:
			k.src, k.dst = netip.AddrFrom16(p.IPv6.Src), netip.AddrFrom16(p.IPv6.Dst)
		default:
			continue
		}
		k.roce = true
	}
	return out
}

// recovery is a Recovery with input indexes (0-based).
type recovery struct {
	Recovery
	first    int   // first lost frame
	lost     []int // lost frames, PSN order
	trigger  int
	template int
	moved    []int
	nak      []byte
}

// findRecoveries turns the drops of RC requests into recoveries.
func findRecoveries(frames []Frame, pk []pkt, dropped []bool, drops []int) ([]*recovery, error) {
	covered := make([]bool, len(frames))
	var recs []*recovery
	for _, d := range drops {
		d--
		p := &pk[d]
		if covered[d] || !p.rcRequest() {
			continue
		}
		if !p.roce {
			return nil, fmt.Errorf("--go-back-n: frame %d: RC request is not RoCEv2: go-back-N needs IP addresses to find the connection; drop it without --go-back-n", d+1)
		}
		s := p.stream()
		rc := &recovery{first: d, lost: []int{d}, trigger: -1}
		rc.Src, rc.Dst, rc.DestQP, rc.PSN = s.src, s.dst, s.qp, p.psn
		plain := false
		for j := d + 1; j < len(frames); j++ {
			q := &pk[j]
			if !q.rcRequest() || !q.roce || q.stream() != s {
				continue
			}
			if dropped[j] {
				rc.lost = append(rc.lost, j)
				covered[j] = true
				continue
			}
			// The capture resends the lost PSN (or an older one) itself:
			// the responder never sees a gap.
			plain = !q.psn.After(p.psn)
			rc.trigger = j
			break
		}
		if plain {
			continue
		}
		rc.Timeout = rc.trigger < 0
		if err := rc.connect(frames, pk, dropped); err != nil {
			return nil, err
		}
		rc.fill(pk)
		recs = append(recs, rc)
	}
	return recs, nil
}

// connect finds the requester's QP, the responses to move and the NAK.
func (rc *recovery) connect(frames []Frame, pk []pkt, dropped []bool) error {
	s := streamKey{rc.Src, rc.Dst, rc.DestQP}
	d := rc.first
	qp, ok, err := requesterQP(pk, s, d)
	if err != nil && !rc.Timeout {
		return err
	}
	if !ok {
		if rc.Timeout {
			return nil // nothing answers: nothing to move
		}
		return fmt.Errorf("--go-back-n: frame %d: no response packet of this connection to build the NAK from (no RC response from %s to %s in the capture); drop it without --go-back-n",
			d+1, s.dst, s.src)
	}
	rc.RequesterQP = qp
	isResp := func(j int) bool {
		q := &pk[j]
		return q.answers(s) && q.qp == qp && !dropped[j]
	}
	end := len(frames)
	if !rc.Timeout {
		end = rc.trigger
	}
	for j := d + 1; j < end; j++ {
		if isResp(j) && !rc.PSN.After(pk[j].psn) {
			rc.moved = append(rc.moved, j)
		}
	}
	if rc.Timeout {
		return nil
	}
	for j := rc.trigger - 1; j >= 0; j-- {
		if isResp(j) && pk[j].aeth && !slices.Contains(rc.moved, j) {
			rc.NAKMSN = pk[j].msn
			break
		}
	}
	// The template: the nearest Acknowledge, else the nearest response
	// with an AETH.
	best, bestAck := -1, -1
	for j := range pk {
		q := &pk[j]
		if !q.answers(s) || q.qp != qp || !q.aeth {
			continue
		}
		if q.op.Is(decode.PropAck) && (bestAck < 0 || absInt(j-d) < absInt(bestAck-d)) {
			bestAck = j
		}
		if best < 0 || absInt(j-d) < absInt(best-d) {
			best = j
		}
	}
	if bestAck >= 0 {
		best = bestAck
	}
	if best < 0 {
		return fmt.Errorf("--go-back-n: frame %d: no response packet of this connection to build the NAK from (no ACK, atomic ACK or READ response from %s QP %#06x to %s QP %#06x); drop it without --go-back-n",
			d+1, s.dst, s.qp, s.src, qp)
	}
	rc.template = best
	rc.nak, err = buildNAK(frames[best], rc.PSN, rc.NAKMSN)
	if err != nil {
		return fmt.Errorf("--go-back-n: frame %d: building the NAK from frame %d: %w", d+1, best+1, err)
	}
	return nil
}

func absInt(v int) int {
	if v < 0 {
		return -v
	}
	return v
}

// requesterQP finds the BTH dest QP the responder of s uses to answer: the
// dest QP of the nearest response to frame d whose PSN is one s sent, or
// of every response between the two addresses when they all agree.
func requesterQP(pk []pkt, s streamKey, d int) (uint32, bool, error) {
	psns := map[decode.PSN]bool{}
	for i := range pk {
		if q := &pk[i]; q.rcRequest() && q.roce && q.stream() == s {
			psns[q.psn] = true
		}
	}
	best := -1
	var qps []uint32
	for j := range pk {
		q := &pk[j]
		if !q.answers(s) {
			continue
		}
		if !slices.Contains(qps, q.qp) {
			qps = append(qps, q.qp)
		}
		if psns[q.psn] && (best < 0 || absInt(j-d) < absInt(best-d)) {
			best = j
		}
	}
	switch {
	case best >= 0:
		return pk[best].qp, true, nil
	case len(qps) == 1:
		return qps[0], true, nil
	case len(qps) == 0:
		return 0, false, nil
	}
	return 0, false, fmt.Errorf("--go-back-n: frame %d: cannot tell which of the QPs %s at %s answers QP %#06x: no response carries a PSN of its requests",
		d+1, hexList(qps), s.src, s.qp)
}

func hexList(v []uint32) string {
	s := make([]string, len(v))
	for i, n := range v {
		s[i] = fmt.Sprintf("%#06x", n)
	}
	return strings.Join(s, ", ")
}

// fill sets the Recovery's input numbers and PSNs.
func (rc *recovery) fill(pk []pkt) {
	byPSN := func(v []int) {
		sort.SliceStable(v, func(a, b int) bool {
			return pk[v[a]].psn.Dist(rc.PSN) < pk[v[b]].psn.Dist(rc.PSN)
		})
	}
	byPSN(rc.lost)
	rc.Lost = nil
	for _, l := range rc.lost {
		rc.Lost = append(rc.Lost, l+1)
	}
	resend := slices.Clone(rc.lost)
	if !rc.Timeout {
		rc.Trigger = rc.trigger + 1
		rc.Template = rc.template + 1
		resend = append(resend, rc.trigger)
		byPSN(resend) // the trigger may be older than a lost request
	}
	rc.Retransmits = make([]Copy, len(resend))
	for i, j := range resend {
		rc.Retransmits[i] = Copy{In: j + 1, PSN: pk[j].psn}
	}
	rc.Moved = make([]Copy, len(rc.moved))
	for i, j := range rc.moved {
		rc.Moved[i] = Copy{In: j + 1, PSN: pk[j].psn}
	}
}

// items returns the frames the recovery inserts. Their output numbers
// arrive through the items' num pointers; outOf is Report.out, which a
// moved response updates, since it is the original frame.
func (rc *recovery) items(frames []Frame, outOf []int) []item {
	var out []item
	if !rc.Timeout {
		info := frames[rc.template].Info
		info.CaptureLength, info.Length = len(rc.nak), len(rc.nak)
		out = append(out, item{f: Frame{Info: info, Data: rc.nak}, step: step, num: &rc.NAK})
	}
	for i := range rc.Retransmits {
		c := &rc.Retransmits[i]
		it := item{f: frames[c.In-1], in: c.In, step: step, num: &c.Out}
		if i == 0 && rc.Timeout {
			it.step, it.tail = timeout, true
		}
		out = append(out, it)
	}
	for _, c := range rc.Moved {
		out = append(out, item{f: frames[c.In-1], in: c.In, step: step, num: &outOf[c.In]})
	}
	return out
}

var errNotRoCEv2 = errors.New("template is not a RoCEv2 RC response")

// buildNAK turns a copy of an RC response into an RC Acknowledge carrying
// a NAK PSN sequence error (AETH syndrome 0x60) for psn, with msn, and
// fixes lengths, checksums and the ICRC.
func buildNAK(t Frame, psn decode.PSN, msn uint32) ([]byte, error) {
	var p decode.Packet
	p.Frame.Len = t.Info.Length
	decode.Decode(&p, t.Data, t.Info.LinkType)
	if p.Encap != decode.EncapRoCEv2 || p.Has&decode.HdrBTH == 0 || p.Has&decode.HdrAETH == 0 {
		return nil, errNotRoCEv2
	}
	if p.Has&decode.HdrICRC == 0 || p.Flags&decode.FlagTruncated != 0 {
		return nil, fmt.Errorf("the response is cut short by the capture: %w", decode.ErrNoCRC)
	}
	bth := p.Offset(p.BTH.Contents)
	aeth := p.Offset(p.AETH.Contents)
	l3, l4 := p.L3Off, p.L4Off
	if bth < 0 || aeth != bth+decode.BTHLen {
		return nil, errNotRoCEv2
	}
	var b []byte
	if p.BTH.Opcode == decode.Opcode(decode.TransportRC|decode.OpAcknowledge) {
		b = bytes.Clone(t.Data)
	} else {
		// Keep the headers through the AETH, then the ICRC; fix lengths.
		end := aeth + decode.AETHLen + decode.ICRCLen
		b = bytes.Clone(t.Data[:end])
		be := binary.BigEndian
		if p.Has&decode.HdrIPv4 != 0 {
			be.PutUint16(b[l3+2:], uint16(end-l3))
			ihl := int(b[l3]&0x0F) * 4
			be.PutUint16(b[l3+10:], 0)
			be.PutUint16(b[l3+10:], ^onesSum(0, b[l3:l3+ihl]))
		} else {
			be.PutUint16(b[l3+4:], uint16(end-l3-40))
		}
		be.PutUint16(b[l4+4:], uint16(end-l4))
	}
	b[bth] = byte(decode.Opcode(decode.TransportRC | decode.OpAcknowledge))
	b[bth+1] &^= 0x80 | 0x30 // no solicited event, no pad
	b[bth+4] &^= 0xC0        // no FECN, BECN
	b[bth+8] = 0             // AckReq 0, reserved
	put24(b[bth+9:], uint32(psn))
	b[aeth] = 0x60 // NAK, PSN sequence error
	put24(b[aeth+1:], msn)
	if err := decode.FixCRCs(b, t.Info.LinkType); err != nil {
		return nil, err
	}
	if binary.BigEndian.Uint16(b[l4+6:]) != 0 {
		fixUDPChecksum(b, l3, l4, p.Has&decode.HdrIPv4 != 0)
	}
	return b, nil
}

func put24(b []byte, v uint32) { b[0], b[1], b[2] = byte(v>>16), byte(v>>8), byte(v) }

// onesSum adds b to sum as 16-bit one's-complement words and folds it.
func onesSum(sum uint32, b []byte) uint16 {
	for len(b) >= 2 {
		sum += uint32(b[0])<<8 | uint32(b[1])
		b = b[2:]
	}
	if len(b) == 1 {
		sum += uint32(b[0]) << 8
	}
	for sum>>16 != 0 {
		sum = sum&0xFFFF + sum>>16
	}
	return uint16(sum)
}

// fixUDPChecksum recomputes the UDP checksum of the datagram at b[l4:]
// (its length from the UDP header) with the IP pseudo-header.
func fixUDPChecksum(b []byte, l3, l4 int, v4 bool) {
	be := binary.BigEndian
	ulen := int(be.Uint16(b[l4+4:]))
	var ph []byte
	if v4 {
		ph = append(ph, b[l3+12:l3+20]...)
		ph = append(ph, 0, 17)
		ph = be.AppendUint16(ph, uint16(ulen))
	} else {
		ph = append(ph, b[l3+8:l3+40]...)
		ph = be.AppendUint32(ph, uint32(ulen))
		ph = append(ph, 0, 0, 0, 17)
	}
	be.PutUint16(b[l4+6:], 0)
	s := onesSum(uint32(onesSum(0, ph)), b[l4:l4+ulen])
	c := ^s
	if c == 0 {
		c = 0xFFFF
	}
	be.PutUint16(b[l4+6:], c)
}
