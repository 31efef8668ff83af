package synth

import (
	"bytes"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/rocetap/rocetap/decode"
)

// TwoPoint describes RC traffic between host A (the requester) and host
// B (the responder) captured at two points on the path between them, one
// next to each host, for tests of rocetap path: what happens to each
// packet between the points is given, so the captures come with the
// truth. Times are true times; A's capture stamps them as they are, B's
// with its own clock (Offset, DriftPPM).
type TwoPoint struct {
	Start    time.Time
	Requests int           // RDMA WRITE Only requests, one every Gap
	Gap      time.Duration // between two requests
	Delay    time.Duration // one-way delay between the points, both ways
	// Jitter varies each packet's delay by up to ±Jitter (a fixed
	// pseudo-random sequence).
	Jitter  time.Duration
	Respond time.Duration // the responder's turnaround
	PSN0    uint32        // the first request's PSN (wraps at 2^24)

	Lost     []int                 // requests (0-based) lost between the points
	LostResp []int                 // responses lost between the points
	Dup      []int                 // requests duplicated between the points (the copy 1 µs later)
	Late     map[int]time.Duration // requests held this much longer between the points
	NAK      []int                 // requests the responder answers with a NAK (remote access error)

	Offset   time.Duration // B's clock minus A's at Start
	DriftPPM float64       // parts per million B's clock gains on A's

	LinkA, LinkB Link // the captures' link types
	// AFrom drops A's frames before Start+AFrom (A's capture started
	// later); BUntil, when not 0, drops B's frames after Start+BUntil.
	AFrom, BUntil time.Duration
	// OffPath requests of another QP (0x99) are sent, one a Gap from
	// Start + Gap/2, on another path: only A sees them.
	OffPath int
	// PSNPeriod, when not 0, makes request i carry PSN PSN0 + i mod
	// PSNPeriod: PSNs come back as they do after a 24-bit wrap, sooner.
	PSNPeriod int
	// SnapB cuts B's frames to this many bytes (a mirror's snapshot
	// length: no ICRC), when not 0.
	SnapB int
}

// TwoPointTruth is what happened, by frame number in each capture.
type TwoPointTruth struct {
	LostA       []int // A's frames of the requests lost between the points
	LostRespB   []int // B's frames of the responses lost between them
	DupB        []int // B's frames of the copies made between them
	ReorderedB  []int // B's frames of requests overtaken between them
	OffPathA    []int // A's frames of the off-path flow
	NAKedB      []int // B's frames of the requests the responder NAKed
	Delays      map[[2]int]time.Duration
	RequestQP   uint32 // BTH dest QP of the requests (B's QP)
	ResponseQP  uint32 // of the responses (A's QP)
	OutsideReqs int    // requests one capture was not running for
}

type tpRec struct {
	t    time.Time // true time
	data []byte
	kind int // 0 request, 1 response, 2 duplicate, 3 off-path
	i    int
}

// Build returns the captures at A and at B (pcapng) and the truth.
func (c TwoPoint) Build() (a, b File, truth TwoPointTruth, err error) {
	in := func(l []int, i int) bool { return slices.Contains(l, i) }
	jit := func(i int) time.Duration {
		return time.Duration(float64(c.Jitter) * float64(int(uint32(i)*2654435761%201)-100) / 100)
	}
	truth.RequestQP, truth.ResponseQP = 0x11, 0x12
	payload := bytes.Repeat([]byte("twopoint"), 32)
	build := func(f RoCEv2, link Link) ([]byte, error) {
		f.Link = link
		data, _, _, err := f.Build()
		return data, err
	}
	var recA, recB []tpRec
	for i := range c.Requests {
		n := i
		if c.PSNPeriod > 0 {
			n = i % c.PSNPeriod
		}
		psn := decode.PSN((c.PSN0 + uint32(n)) & 0xFFFFFF)
		var req RoCEv2
		req.T.BTH = decode.BTH{Opcode: decode.TransportRC.Opcode(decode.OpWriteOnly), DestQP: truth.RequestQP, PSN: psn, AckReq: true, PKey: 0xFFFF}
		req.T.RETH = decode.RETH{VA: 0x10000 + uint64(i)*256, RKey: 0x1234, DMALen: uint32(len(payload))}
		req.T.Payload = payload
		sent := c.Start.Add(time.Duration(i) * c.Gap)
		da, err := build(req, c.LinkA)
		if err != nil {
			return a, b, truth, err
		}
		recA = append(recA, tpRec{sent, da, 0, i})
		if in(c.Lost, i) {
			continue
		}
		arrive := sent.Add(c.Delay + jit(i) + c.Late[i])
		db, err := build(req, c.LinkB)
		if err != nil {
			return a, b, truth, err
		}
		recB = append(recB, tpRec{arrive, db, 0, i})
		if in(c.Dup, i) {
			recB = append(recB, tpRec{arrive.Add(time.Microsecond), db, 2, i})
		}
		var resp RoCEv2
		resp.Reverse = true
		resp.T.BTH = decode.BTH{Opcode: decode.TransportRC.Opcode(decode.OpAcknowledge), DestQP: truth.ResponseQP, PSN: psn, PKey: 0xFFFF}
		resp.T.AETH = decode.AETH{Syndrome: 0x1F, MSN: uint32(i+1) & 0xFFFFFF}
		if in(c.NAK, i) {
			resp.T.AETH.Syndrome = 0x62
		}
		answered := arrive.Add(c.Respond)
		if db, err = build(resp, c.LinkB); err != nil {
			return a, b, truth, err
		}
		recB = append(recB, tpRec{answered, db, 1, i})
		if in(c.LostResp, i) {
			continue
		}
		if da, err = build(resp, c.LinkA); err != nil {
			return a, b, truth, err
		}
		recA = append(recA, tpRec{answered.Add(c.Delay + jit(i+1<<20)), da, 1, i})
	}
	for i := range c.OffPath {
		var req RoCEv2
		req.T.BTH = decode.BTH{Opcode: decode.TransportRC.Opcode(decode.OpSendOnly), DestQP: 0x99, PSN: decode.PSN(i), PKey: 0xFFFF}
		req.T.Payload = payload[:64]
		da, err := build(req, c.LinkA)
		if err != nil {
			return a, b, truth, err
		}
		recA = append(recA, tpRec{c.Start.Add(c.Gap/2 + time.Duration(i)*c.Gap), da, 3, i})
	}
	recA = slices.DeleteFunc(recA, func(r tpRec) bool { return r.t.Before(c.Start.Add(c.AFrom)) })
	if c.BUntil > 0 {
		recB = slices.DeleteFunc(recB, func(r tpRec) bool { return r.t.After(c.Start.Add(c.BUntil)) })
	}
	byTime := func(x, y tpRec) int { return x.t.Compare(y.t) }
	slices.SortStableFunc(recA, byTime)
	slices.SortStableFunc(recB, byTime)

	frameA, frameB := map[[2]int]int{}, map[[2]int]int{}
	for n, r := range recA {
		frameA[[2]int{r.kind, r.i}] = n + 1
	}
	for n, r := range recB {
		frameB[[2]int{r.kind, r.i}] = n + 1
	}
	truth.Delays = map[[2]int]time.Duration{}
	latest := -1 // the latest-sent request B has seen
	for n, r := range recB {
		switch r.kind {
		case 0:
			if fa := frameA[[2]int{0, r.i}]; fa > 0 {
				truth.Delays[[2]int{fa, n + 1}] = r.t.Sub(c.Start.Add(time.Duration(r.i) * c.Gap))
			}
			if r.i < latest {
				truth.ReorderedB = append(truth.ReorderedB, n+1)
			}
			latest = max(latest, r.i)
			if in(c.NAK, r.i) {
				truth.NAKedB = append(truth.NAKedB, n+1)
			}
		case 1:
			if in(c.LostResp, r.i) {
				truth.LostRespB = append(truth.LostRespB, n+1)
			}
		case 2:
			truth.DupB = append(truth.DupB, n+1)
		}
	}
	// A lost packet counts when B's capture was running (from its first
	// frame to its last) when it would have arrived.
	covered := func(t time.Time) bool {
		return len(recB) > 0 && !t.Before(recB[0].t) && !t.After(recB[len(recB)-1].t)
	}
	for n, r := range recA {
		switch {
		case r.kind == 0 && in(c.Lost, r.i) && covered(r.t.Add(c.Delay+jit(r.i))):
			truth.LostA = append(truth.LostA, n+1)
		case r.kind == 3:
			truth.OffPathA = append(truth.OffPathA, n+1)
		}
	}
	for i := range c.Requests {
		if frameA[[2]int{0, i}] == 0 || !in(c.Lost, i) && frameB[[2]int{0, i}] == 0 {
			truth.OutsideReqs++
		}
	}
	slices.Sort(truth.ReorderedB)

	bClock := func(t time.Time) time.Time {
		d := t.Sub(c.Start)
		return t.Add(c.Offset + time.Duration(math.Round(float64(d)*c.DriftPPM*1e-6)))
	}
	file := func(name string, link Link, recs []tpRec, clock func(time.Time) time.Time) File {
		f := File{Name: name, Format: PcapNG, Ifaces: []Iface{{Name: name, LinkType: linkTypes[link]}}}
		for _, r := range recs {
			data := r.data
			if name == "b" && c.SnapB > 0 && len(data) > c.SnapB {
				data = data[:c.SnapB]
			}
			f.Records = append(f.Records, Record{Time: clock(r.t), Data: data, Len: len(r.data)})
		}
		return f
	}
	a = file("a", c.LinkA, recA, func(t time.Time) time.Time { return t })
	b = file("b", c.LinkB, recB, bClock)
	if len(a.Records) == 0 || len(b.Records) == 0 {
		return a, b, truth, fmt.Errorf("two-point captures: A has %d frames, B %d", len(a.Records), len(b.Records))
	}
	return a, b, truth, nil
}
