package flow

import (
	"reflect"
	"runtime"
	"testing"
	"time"
	"unsafe"

	"github.com/rocetap/rocetap/decode"
	"github.com/rocetap/rocetap/internal/synth"
)

// trackPairs feeds tr n RC QP pairs as gencap -pairs makes them: each
// pair one exchange of four packets (WRITE Only + ACK, READ + READ
// Response Only), between 64 host pairs, 1 µs apart. It returns the time
// of the last packet.
func trackPairs(tr *Tracker, n int, at time.Time) time.Time {
	return trackPairsEach(tr, n, at, nil, nil)
}

// trackPairsEach is trackPairs calling before and after (when not nil)
// with each packet, before and after it is tracked.
func trackPairsEach(tr *Tracker, n int, at time.Time, before, after func(*decode.Packet)) time.Time {
	return synth.QPPairs(n, at, func(p *decode.Packet) {
		if before != nil {
			before(p)
		}
		tr.Track(p)
		if after != nil {
			after(p)
		}
	})
}

// The budget of a QP pair gone idle, so that a capture of millions of
// them fits in memory: the heap a Tracker holds per pair (the session,
// its share of the maps and lists) after many 4-packet pairs went idle.
// It was ~15 KB.
func TestIdleSessionBudget(t *testing.T) {
	const pairs, budget = 20000, 440
	if n := unsafe.Sizeof(Session{}); n > 320 {
		t.Errorf("a Session, with room for two kinds of message, is %d bytes, want at most 320, five cache lines (what it keeps only in flight belongs in liveState, rare counts in Findings)", n)
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	tr := New(Options{})
	end := trackPairs(tr, pairs, epoch)
	// a packet an idle period later: every pair is idle
	var p decode.Packet
	p.Frame = decode.Frame{Number: 4*pairs + 1, Time: end.Add(2 * time.Second), Len: 60}
	tr.Track(&p)
	runtime.GC()
	runtime.ReadMemStats(&after)
	per := (int64(after.HeapAlloc) - int64(before.HeapAlloc)) / pairs
	ss := tr.Sessions()
	if len(ss) != pairs {
		t.Fatalf("%d sessions, want %d", len(ss), pairs)
	}
	for _, s := range ss {
		if s.live != nil || s.Messages(decode.MsgWrite) != 1 || s.Latency(decode.MsgRead).N != 1 {
			t.Fatalf("session %d: live state %v, writes %d, read latencies %d", s.ID, s.live != nil, s.Messages(decode.MsgWrite), s.Latency(decode.MsgRead).N)
		}
	}
	runtime.KeepAlive(tr)
	t.Logf("%d bytes per idle QP pair (Session %d bytes)", per, unsafe.Sizeof(Session{}))
	if per > budget {
		t.Errorf("%d bytes per idle QP pair, want at most %d", per, budget)
	}
}

// The budget of a QP pair that did many messages and went idle: what it
// keeps of their latencies is packed (Latency.pack), a few dozen bytes
// for latencies over a few buckets, where the histogram alone was 4 KiB
// a kind of message (8 KiB a pair).
func TestBusyIdleSessionBudget(t *testing.T) {
	// (measured as what n more pairs cost: the tracker's fixed share,
	// its free live states above all, is not per pair)
	const pairs, rounds, budget = 3000, 66, 570
	heap := func(n int) (int64, *Tracker) {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		tr := New(Options{})
		end := synth.QPPairsRounds(n, rounds, epoch, tr.Track)
		var p decode.Packet
		p.Frame = decode.Frame{Number: 4*n*rounds + 1, Time: end.Add(2 * time.Second), Len: 60}
		tr.Track(&p) // an idle period later: every pair is idle
		runtime.GC()
		runtime.ReadMemStats(&after)
		return int64(after.HeapAlloc) - int64(before.HeapAlloc), tr
	}
	one, tr1 := heap(pairs)
	runtime.KeepAlive(tr1)
	tr1 = nil
	two, tr := heap(2 * pairs)
	per := (two - one) / pairs
	ss := tr.Sessions()
	if len(ss) != 2*pairs {
		t.Fatalf("%d sessions, want %d", len(ss), 2*pairs)
	}
	var want Latency // each pair's: 1 + r mod 8 µs in round r, never packed
	for r := range rounds {
		want.Add(time.Duration(1+r%8) * time.Microsecond)
	}
	for _, s := range ss {
		w, r := s.Latency(decode.MsgWrite), s.Latency(decode.MsgRead)
		for _, q := range []float64{0.5, 0.99} {
			if w.Quantile(q) != want.Quantile(q) || r.Quantile(q) != want.Quantile(q) || w.Mean() != want.Mean() || r.Mean() != want.Mean() {
				t.Fatalf("session %d: q%g %v and %v, means %v and %v; want %v, %v", s.ID, q, w.Quantile(q), r.Quantile(q), w.Mean(), r.Mean(), want.Quantile(q), want.Mean())
			}
		}
		if s.live != nil || w.N != rounds || r.N != rounds || w.Min != time.Microsecond || r.Max != 8*time.Microsecond {
			t.Fatalf("session %d: live state %v, write latencies %d from %v, read latencies %d to %v", s.ID, s.live != nil, w.N, w.Min, r.N, r.Max)
		}
		if w.unpacked() || r.unpacked() || w.more == nil || r.more == nil {
			t.Fatalf("session %d: its latencies are not packed", s.ID)
		}
	}
	runtime.KeepAlive(tr)
	t.Logf("%d bytes per idle QP pair after %d messages (%d WRITEs and %d READs, each answered)", per, 2*rounds, rounds, rounds)
	if per > budget {
		t.Errorf("%d bytes per idle QP pair after %d messages, want at most %d", per, 2*rounds, budget)
	}
}

// Past maxLive sessions with a live state, the least recently queued
// quiet ones are released whatever IdleAfter says: a fast link may carry
// millions of QPs within it.
func TestLiveStatesBounded(t *testing.T) {
	tr := New(Options{IdleAfter: -1})
	trackPairs(tr, maxLive+maxLive/2, epoch)
	live := 0
	for _, s := range tr.Sessions() {
		if s.live != nil {
			live++
		}
	}
	if live > maxLive+sweepWork {
		t.Errorf("%d sessions with a live state, want at most %d", live, maxLive)
	}
	if n := len(tr.Sessions()); n != maxLive+maxLive/2 {
		t.Errorf("%d sessions, want %d", n, maxLive+maxLive/2)
	}
}

// OnEvicting is called once, before the first session is evicted and
// only then: the commands collect garbage less often until it is.
func TestOnEvicting(t *testing.T) {
	for _, tc := range []struct {
		max, pairs int
		calls      int
	}{
		{0, 50, 0},
		{64, 64, 0},
		{64, 65, 1},
		{4, 50, 1},
	} {
		var tr *Tracker
		calls := 0
		tr = New(Options{MaxSessions: tc.max, OnEvicting: func() {
			calls++
			if n := tr.Evicted().Sessions; n != 0 {
				t.Errorf("max %d: called with %d sessions evicted, want before the first", tc.max, n)
			}
		}})
		trackPairs(tr, tc.pairs, epoch)
		if calls != tc.calls {
			t.Errorf("max %d, %d pairs: called %d times, want %d", tc.max, tc.pairs, calls, tc.calls)
		}
	}
}

// Past MaxSessions the least recently active session is evicted: its
// counts go to Evicted, what it had in flight is reported as at the end
// of the capture, and a later packet of its QPs starts a new session.
func TestMaxSessions(t *testing.T) {
	var events []Event
	tr := New(Options{MaxSessions: 4, OnEvent: func(e *Event) { events = append(events, *e) }})
	at := trackPairs(tr, 10, epoch)
	ss := tr.Sessions()
	if len(ss) != 4 || ss[0].ID != 7 || ss[3].ID != 10 {
		t.Fatalf("%d sessions from #%d, want #7 to #10", len(ss), ss[0].ID)
	}
	if e := tr.Evicted(); e.Sessions != 6 || e.Packets != 24 || e.Messages != 12 {
		t.Errorf("evicted %+v, want 6 sessions, 24 packets, 12 messages", e)
	}
	if tr.Session(1) != nil || tr.Session(7) != ss[0] {
		t.Error("Session(id) still finds an evicted session")
	}
	// pair 9 (session #10) sends a WRITE it never gets an answer to,
	// then pairs 0 to 3 come back: each is a new session, and #7 to #10
	// make room for them
	var p decode.Packet
	send := func(src, dst [4]byte, qp uint32, psn uint32) {
		at = at.Add(time.Millisecond)
		p = decode.Packet{}
		p.Frame = decode.Frame{Number: 100, Time: at, Len: 100}
		p.Has = decode.HdrEth | decode.HdrIPv4 | decode.HdrUDP | decode.HdrBTH | decode.HdrRETH
		p.IPv4.Src, p.IPv4.Dst = src, dst
		p.BTH.Opcode, p.BTH.DestQP, p.BTH.PSN = rcWriteOnly, qp, decode.PSNOf(psn)
		p.RETH.DMALen = 0
		tr.Track(&p)
	}
	send([4]byte{10, 2, 9, 1}, [4]byte{10, 2, 9, 2}, 0x1001+2*9, 9*7919+2)
	if p.Analysis.Session != 10 {
		t.Fatalf("pair 9's WRITE went to session %d, want 10", p.Analysis.Session)
	}
	for i := range 4 {
		h := byte(i)
		send([4]byte{10, 2, h, 1}, [4]byte{10, 2, h, 2}, uint32(0x1001+2*i), uint32(i*7919+2))
		if want := uint32(11 + i); p.Analysis.Session != want {
			t.Errorf("pair %d's WRITE went to session %d, want a new one, %d", i, p.Analysis.Session, want)
		}
	}
	if e := tr.Evicted(); e.Sessions != 10 || e.Findings.NoResponse != 1 {
		t.Errorf("evicted %d sessions with %d unanswered requests, want 10 with 1", e.Sessions, e.Findings.NoResponse)
	}
	if len(events) != 1 || events[0].Kind != decode.EventNoResponse || events[0].Session != 10 {
		t.Errorf("events %+v, want session 10's WRITE unanswered", events)
	}
	if n := tr.halves.len(); n != 4 {
		t.Errorf("%d directions mapped, want the 4 of the sessions kept", n)
	}
}

// A request stream's state apart from its lists has no pointers: release
// clears it with a plain clear, where a struct with pointers goes
// through the garbage collector's write barrier (85 ns a stream at a
// million QP pairs).
func TestReqStateHasNoPointers(t *testing.T) {
	var walk func(reflect.Type, string)
	walk = func(ty reflect.Type, path string) {
		switch ty.Kind() {
		case reflect.Pointer, reflect.Slice, reflect.Map, reflect.String, reflect.Interface, reflect.Chan, reflect.Func, reflect.UnsafePointer:
			t.Errorf("%s is a %s: reqState must hold no pointers (put it in reqBufs)", path, ty.Kind())
		case reflect.Array:
			walk(ty.Elem(), path+"[]")
		case reflect.Struct:
			for i := range ty.NumField() {
				walk(ty.Field(i).Type, path+"."+ty.Field(i).Name)
			}
		}
	}
	walk(reflect.TypeFor[reqState](), "reqState")
}

// Past the first eviction (Options.MaxSessions), sessions are allocated
// one by one: a slab lives as long as its longest-lived session, so a
// slab made then could keep the memory of slabMax-1 evicted ones.
func TestNoSlabsPastEviction(t *testing.T) {
	tr := New(Options{MaxSessions: 64})
	trackPairs(tr, 1000, epoch)
	if tr.evicted.Sessions == 0 {
		t.Fatal("no session evicted: the test must pass MaxSessions")
	}
	if cap(tr.slab) != 0 {
		t.Errorf("a slab with room for %d more sessions after %d evictions: want sessions allocated one by one", cap(tr.slab), tr.evicted.Sessions)
	}
}
