package stream

import (
	"io"
	"os"
	"runtime"
	"strconv"

	"github.com/rocetap/rocetap/decode"
	"github.com/rocetap/rocetap/decode/filter"
	"github.com/rocetap/rocetap/flow"
)

// Pass is the filter pass over decoded packets in capture order: the
// tracker, when there is one, sees every packet (stateful filter fields
// read what it found), then the filter picks the packets handed to Each.
type Pass struct {
	Tracker *flow.Tracker
	Filter  *filter.Filter
	Limit   int // stop after this many packets passed (0: all)
	// Each is called for every packet the filter passes, after the
	// tracker; it returns false to stop.
	Each   func(p *decode.Packet) bool
	passed int
}

// Match tracks p and reports whether the filter selects it (every packet
// without a filter).
func (ps *Pass) Match(p *decode.Packet) bool {
	if ps.Tracker != nil {
		ps.Tracker.Track(p)
	}
	return ps.Filter == nil || ps.Filter.Match(p)
}

// Packet passes p: Match, then Each. It returns false to stop.
func (ps *Pass) Packet(p *decode.Packet) bool {
	// Match's body, spelled out: the call costs on the hot path.
	if ps.Tracker != nil {
		ps.Tracker.Track(p)
	}
	if ps.Filter != nil && !ps.Filter.Match(p) {
		return true
	}
	ps.passed++
	if ps.Each != nil && !ps.Each(p) {
		return false
	}
	return ps.Limit <= 0 || ps.passed < ps.Limit
}

// Passed is the number of packets the filter passed so far.
func (ps *Pass) Passed() int { return ps.passed }

// NeedsTracker reports whether printing fields or filtering with flt
// needs the tracker: whether one of them is a stateful field
// (rocetap.session/msg/analysis/expert/mpt, computed across packets).
func NeedsTracker(fields []string, flt *filter.Filter) bool {
	for _, name := range fields {
		if f := decode.FieldByName(name); f != nil && f.Stateful {
			return true
		}
	}
	if flt != nil {
		for _, f := range flt.Fields() {
			if f.Stateful {
				return true
			}
		}
	}
	return false
}

// TrackOptions configure Track.
type TrackOptions struct {
	Decoder *decode.Decoder
	Pass
	// OneGoroutine reads on the caller's goroutine even with several
	// cores: for a consumer whose work per packet dwarfs reading it
	// (replay feeds the reference model). Track's second goroutine copies
	// every packet into batches, which costs such a consumer more than it
	// saves. Measured on 2 cores with the benchmark's replay capture
	// (1,000,018 packets, bench/run.sh), best of 5: one goroutine 0.70 s
	// (0.70 s of CPU), Track's reader goroutine 0.97 s (0.96 s of CPU),
	// and decoding on a third goroutine 1.0 s (1.9 s of CPU).
	// ROCETAP_WORKERS=2 takes the two-goroutine path instead, to compare.
	OneGoroutine bool
}

// PrefetchDecoder returns a copy of d (of the default decoder when d is
// nil) that has t fetch each packet's direction while it computes the
// packet's ICRC (flow.Tracker.Prefetch): at a million QP pairs a new
// direction is a miss in a table far larger than the caches. d is left
// as it is. The decoder returned must decode only packets that go to t,
// in order, each before t tracks it and at most one packet ahead (what
// it finds is kept by frame number's parity), on t's goroutine (or
// under its lock).
func PrefetchDecoder(d *decode.Decoder, t *flow.Tracker) *decode.Decoder {
	c := decode.NewDecoder()
	if d != nil {
		*c = *d
	}
	c.Headers = t.Prefetch
	return c
}

// Track reads, decodes and passes every packet in capture order (the
// tracker's state depends on the order): the path of every command that
// shows the tracker's findings (sessions, stats, expert, replay, decode
// when its output shows analysis). It returns the number of packets
// passed. At the end of the source the tracker reports what is still
// open (Flush); a capture that stops part-way ends with a *CorruptError
// after every packet before it went through. Each may be called for a
// packet after the next was read and decoded (see trackSequential): the
// source's Offset is then the next packet's; a Stop from Each still
// passes no packet after.
//
// With more than minParallelProcs cores (or ROCETAP_WORKERS=2 and up), a reader
// goroutine reads the capture into batches (as Parallel's does) while this goroutine decodes, tracks, filters and
// hands them on in order. Measured on 2 cores, this split beats a third
// stage that decodes in parallel: the tracker is fast, and every hand-off
// costs. With 2 Ps everything runs on this goroutine (with
// ROCETAP_READAHEAD=1 the capture reader reads the file ahead on the other
// core: see minParallelProcs and readAhead for what it gives and costs).
func (s *Source) Track(o TrackOptions) (int, error) {
	if o.Tracker != nil && o.Decoder.Headers == nil {
		o.Decoder = PrefetchDecoder(o.Decoder, o.Tracker)
	}
	if o.Tracker != nil && s.r != nil {
		o.Tracker.SetInterfaceSpeed(s.InterfaceSpeed) // PFC pause times (flow/pfc.go)
	}
	// ROCETAP_WORKERS=1 forces one goroutine, 2 or more the pipeline (to
	// compare them); else the pipeline runs from minParallelProcs+1 Ps.
	w, _ := strconv.Atoi(os.Getenv("ROCETAP_WORKERS"))
	procs := w >= 2 || w == 0 && !o.OneGoroutine && runtime.GOMAXPROCS(0) > minParallelProcs
	if procs {
		return s.trackBatches(&o)
	}
	return s.trackSequential(&o)
}

// trackSequential is Track on one goroutine: read, decode, track and hand
// on each packet in turn.
//
// With a capture reader and a tracker that prefetches (PrefetchDecoder),
// it decodes a packet before it tracks the one before, when that one's
// bytes stay valid through the read (capture.Reader.NextBuffered): the
// decoder's Headers then fetch the new packet's direction from memory a
// whole packet before the tracker looks it up, not only while its ICRC
// is computed. At a million QP pairs, where each new direction misses
// the caches, sessions took 1.56 CPU s against 1.61 (median of 11
// interleaved runs). While the direction table fits in the caches
// (Tracker.Prefetching), each packet is tracked as soon as it is
// decoded: two packets in turn (4 KB each) cost the 8-pair capture 3%.
func (s *Source) trackSequential(o *TrackOptions) (int, error) {
	var ps [2]decode.Packet
	p, spare := &ps[0], &ps[1]
	var held *decode.Packet // decoded, to pass once the next is decoded
	stopped := false
	ahead := s.r != nil && o.Decoder.Headers != nil && o.Tracker != nil
	err := s.Read(func(pk *Packet) error {
		pk.SetFrame(&p.Frame)
		o.Decoder.Decode(p, pk.Data, pk.Info.LinkType)
		if held != nil {
			q := held
			held = nil
			if !o.Packet(q) {
				stopped = true
				return ErrStop
			}
			if s.stop.Load() { // (Stop from Each: p is the packet after, which it stops before)
				return nil
			}
		}
		if ahead && o.Tracker.Prefetching() && s.r.NextBuffered() {
			held, p, spare = p, spare, p
			return nil
		}
		if !o.Packet(p) {
			stopped = true
			return ErrStop
		}
		return nil
	})
	if held != nil && !stopped && !s.stop.Load() && !o.Packet(held) {
		stopped = true
	}
	if stopped {
		return o.passed, nil
	}
	return o.passed, o.finish(err)
}

// trackBatches is Track with a reader goroutine.
func (s *Source) trackBatches(o *TrackOptions) (int, error) {
	free := newBatches(false)
	work := make(chan *batch, inFlight)
	order := make(chan *batch, inFlight)
	done := make(chan struct{})
	go s.readBatches(free, work, order, done)
	// Batches need no work here before they come in order.
	go func() {
		for b := range work {
			b.ready <- struct{}{}
		}
	}()
	var ps [2]decode.Packet
	p, spare := &ps[0], &ps[1]
	ahead := o.Decoder.Headers != nil && o.Tracker != nil
	defer func() {
		close(done)
		for b := range order { // let the reader stop
			<-b.ready
		}
	}()
	for b := range order {
		<-b.ready
		// spare holds the packet before p when held, decoded, to pass
		// once p is (as trackSequential does it; a batch's packets stay
		// valid until it is handed back): at 1M QP pairs sessions took
		// 1.88 CPU s against 1.98 with ROCETAP_WORKERS=2.
		held := false
		for i := 0; i < b.n; i++ {
			p.Frame = b.frames[i]
			o.Decoder.Decode(p, b.data[i], b.links[i])
			if held {
				held = false
				if !o.Packet(spare) {
					return o.passed, nil
				}
				if s.stop.Load() { // (Stop from Each: p is the packet after)
					return o.passed, o.finish(nil)
				}
			}
			if ahead && i+1 < b.n && o.Tracker.Prefetching() {
				held, p, spare = true, spare, p
				continue
			}
			if !o.Packet(p) {
				return o.passed, nil
			}
			if s.stop.Load() { // as Read ends before the next packet
				return o.passed, o.finish(nil)
			}
		}
		if b.err != nil {
			if b.err == io.EOF {
				b.err = nil
			}
			return o.passed, o.finish(b.err)
		}
		free <- b
	}
	return o.passed, o.finish(nil)
}

// finish ends the pass at the end of the source (err nil) or at err: the
// tracker reports what is still open.
func (o *TrackOptions) finish(err error) error {
	if o.Tracker != nil {
		o.Tracker.Flush()
	}
	return err
}
