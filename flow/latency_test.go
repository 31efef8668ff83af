package flow

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/rocetap/rocetap/decode"
)

// A packed Latency answers every quantile, the mean and the count as the
// unpacked one does, and goes on from where it was when values come
// after: packing (a session going idle) changes nothing a report shows.
func TestLatencyPack(t *testing.T) {
	qs := []float64{0, 0.01, 0.25, 0.5, 0.9, 0.99, 0.999, 1}
	for _, tc := range []struct {
		name   string
		n      int
		value  func(r *rand.Rand, i int) time.Duration
		packAt []int // pack after these many values
		most   int   // bytes the packed form may take at the end
	}{
		{"three", 3, func(r *rand.Rand, i int) time.Duration { return time.Duration(5000 + i) }, []int{3}, 8},
		{"exact, spread", 64, func(r *rand.Rand, i int) time.Duration { return time.Duration(r.Int64N(1e9)) }, []int{3, 10, 63, 64}, 64 * 5},
		{"exact to histogram", 65, func(r *rand.Rand, i int) time.Duration { return time.Duration(3000 + r.Int64N(6000)) }, []int{64, 65}, 80},
		{"zeros", 200, func(r *rand.Rand, i int) time.Duration { return 0 }, []int{5, 100, 200}, 8},
		{"histogram, 1-8 µs", 10000, func(r *rand.Rand, i int) time.Duration { return time.Duration(1+i%8) * time.Microsecond }, []int{70, 5000, 10000}, 40},
		{"histogram, every bucket", 100000, func(r *rand.Rand, i int) time.Duration { return time.Duration(r.Uint64() >> uint(r.IntN(64))) }, []int{1000, 100000}, histBuckets * 8},
		{"negative as zero", 80, func(r *rand.Rand, i int) time.Duration { return time.Duration(i%3 - 1) }, []int{3, 80}, 8},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(1, uint64(tc.n)))
			var packed, plain Latency
			at := 0
			for i := range tc.n {
				d := tc.value(r, i)
				packed.Add(d)
				plain.Add(d)
				if at < len(tc.packAt) && tc.packAt[at] == i+1 {
					at++
					packed.pack()
					packed.pack() // (twice is once)
					if packed.more == nil || packed.more.packed == nil || packed.more.exact != nil || packed.more.hist != nil {
						t.Fatalf("after %d values: not packed alone", i+1)
					}
					for _, q := range qs {
						if g, w := packed.Quantile(q), plain.Quantile(q); g != w {
							t.Fatalf("after %d values: packed q%g = %v, want %v", i+1, q, g, w)
						}
					}
				}
			}
			if packed.N != plain.N || packed.Min != plain.Min || packed.Max != plain.Max || packed.Mean() != plain.Mean() {
				t.Errorf("packed N %d min %v max %v mean %v, want %d %v %v %v", packed.N, packed.Min, packed.Max, packed.Mean(), plain.N, plain.Min, plain.Max, plain.Mean())
			}
			for _, q := range qs {
				if g, w := packed.Quantile(q), plain.Quantile(q); g != w {
					t.Errorf("q%g = %v, want %v", q, g, w)
				}
			}
			if b := packed.more.packed; len(b) > tc.most || cap(b) != len(b) {
				t.Errorf("packed in %d bytes (capacity %d), want at most %d", len(b), cap(b), tc.most)
			}
			// what clone shares is never written: the clone goes on alone
			c := packed.clone()
			c.Add(time.Hour)
			if packed.Max == time.Hour || packed.more.packed == nil || packed.Quantile(1) != plain.Quantile(1) {
				t.Error("adding to a clone changed the packed original")
			}
		})
	}
}

// A Latency of one or two values has nothing to pack.
func TestLatencyPackNothing(t *testing.T) {
	var l Latency
	l.pack()
	l.Add(time.Microsecond)
	l.Add(2 * time.Microsecond)
	l.pack()
	if l.more != nil || l.Quantile(0.5) != time.Microsecond {
		t.Errorf("two values: samples %v, median %v", l.more != nil, l.Quantile(0.5))
	}
}

// The queue of sessions released while active (packWhenIdle, packIdle):
// each queued once; packed an IdleAfter later if it stayed quiet; left
// alone if live again, queued again if active since; an evicted one
// skipped; a stamp from a packet whose time went back does not stall
// the queue.
func TestPackQueue(t *testing.T) {
	tr := New(Options{})
	trackPairs(tr, 6, epoch)
	ss := tr.Sessions()
	idle := int64(tr.opts.IdleAfter)
	now := epoch.UnixNano() + 10*idle
	for _, s := range ss {
		s.live = nil
		for i := range 3 {
			s.addKind(decode.MsgWrite).lat.Add(time.Duration(i+1) * time.Microsecond)
		}
		s.last = now
	}
	packed := func(s *Session) bool { return !s.kind(decode.MsgWrite).lat.unpacked() }
	quiet, live, active, evicted, future, after := ss[0], ss[1], ss[2], ss[3], ss[4], ss[5]

	// a stamp in the future first, then the others as time goes back
	tr.now = now + 100*idle
	future.last = tr.now
	tr.packWhenIdle(future)
	tr.now = now
	for _, s := range []*Session{quiet, live, active, evicted, after} {
		tr.packWhenIdle(s)
		tr.packWhenIdle(s) // (queued once)
	}
	if n := tr.packQ.len(); n != 6 {
		t.Fatalf("%d queued, want 6", n)
	}
	for _, s := range ss {
		if packed(s) || s.flags&flagPackQueued == 0 {
			t.Fatalf("session %d packed %v, queued %v before it was idle", s.ID, packed(s), s.flags&flagPackQueued != 0)
		}
	}
	// the future stamp is due at once (time went back): its session,
	// active "since", is queued again at the time now; the rest wait
	tr.packIdle()
	if packed(future) || tr.packQ.head != 1 || len(tr.packQ.q) != 7 {
		t.Fatalf("after the future stamp: packed %v, head %d of %d", packed(future), tr.packQ.head, len(tr.packQ.q))
	}
	live.live = &liveState{}
	active.last = now + idle/2
	tr.sessions.drop(int(evicted.ID) - 1)
	tr.now = now + idle
	tr.packIdle()
	if !packed(quiet) || !packed(after) || packed(live) || packed(active) {
		t.Errorf("an IdleAfter later: packed quiet %v, after %v, live %v, active %v; want true, true, false, false", packed(quiet), packed(after), packed(live), packed(active))
	}
	if live.flags&flagPackQueued != 0 || active.flags&flagPackQueued == 0 {
		t.Errorf("the live session is still queued (%v), or the active one not again (%v)", live.flags&flagPackQueued != 0, active.flags&flagPackQueued == 0)
	}
	tr.now = now + 2*idle
	tr.packIdle()
	if !packed(active) || packed(future) || tr.packQ.len() != 1 {
		t.Errorf("two IdleAfters later: packed active %v, future %v; %d left queued, want true, false, 1", packed(active), packed(future), tr.packQ.len())
	}
	// the future session's last packet is still ahead: it waits, once in
	// the queue, until the capture's time is an IdleAfter past it
	tr.now = future.last + idle
	tr.packIdle()
	if !packed(future) || tr.packQ.len() != 0 {
		t.Errorf("past its last packet: packed %v, %d left queued", packed(future), tr.packQ.len())
	}
	for _, s := range ss { // 1 µs (the pair's WRITE), then 1, 2 and 3
		if l := s.kind(decode.MsgWrite).lat; l.N != 4 || l.Quantile(0.5) != time.Microsecond || l.Quantile(0.99) != 3*time.Microsecond {
			t.Errorf("session %d: %d latencies, median %v, p99 %v; want 4, 1µs, 3µs", s.ID, l.N, l.Quantile(0.5), l.Quantile(0.99))
		}
	}
}

// The live queue does not stall either when a packet's time goes back:
// a session queued an hour ahead is looked at (and queued again at the
// present), and the one queued after it, idle, is released.
func TestLiveQueueTimeBack(t *testing.T) {
	tr := New(Options{})
	exchange := func(qa, qb uint32, at time.Duration) *gen {
		g := &gen{qa: qa, qb: qb, t: at}
		return g.req(rcWriteOnly, 0, reth(8), payload(8)).resp(rcAck, 0, aeth(ack))
	}
	var frames []decode.Packet
	frames = append(frames, exchange(1, 2, time.Hour).frames...)          // session 1, an hour ahead
	frames = append(frames, exchange(3, 4, 20*time.Second).frames...)     // session 2
	frames = append(frames, exchange(5, 6, 30*time.Second).frames[:1]...) // 10 s later
	for i := range frames {
		tr.Track(&frames[i])
	}
	ss := tr.Sessions()
	if len(ss) != 3 {
		t.Fatalf("%d sessions, want 3", len(ss))
	}
	if ss[0].live == nil || ss[1].live != nil {
		t.Errorf("session 1 (an hour ahead) live %v, session 2 (idle 10 s) live %v; want true, false", ss[0].live != nil, ss[1].live != nil)
	}
}
