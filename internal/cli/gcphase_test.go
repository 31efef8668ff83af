package cli

import (
	"math"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"testing"
	"time"

	"github.com/rocetap/rocetap/internal/gcphase"
)

// TestGCReportPhase: the report phase starts no collection because the
// heap grew during tracking (GOGC=50 from tracking's last, small marked
// heap had the first allocation of the report start one, which marked
// every session again), collects once the heap has grown by
// reportGCPercent over its size, and puts the settings back.
func TestGCReportPhase(t *testing.T) {
	t.Setenv("GOGC", "") // (empty: unset, for gcphase.Set and gcReportPhase)
	t.Setenv("GOMEMLIMIT", "")
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(math.MaxInt64))
	restoreTrack := gcphase.Set(gcphase.Track)
	var live [][]byte
	grow := func(mb int) {
		for range mb * 16 {
			live = append(live, make([]byte, 64<<10))
		}
	}
	grow(20)
	runtime.GC() // marks 20 MB: the next collection is due at 5× that
	grow(60)     // the "sessions": 80 MB, 20 of them marked
	before := gcCycles()
	g := startReportGC() // (gcReportPhase's, the environment setting neither; TestGCReportPhaseEnv has the others)
	restore := g.restore
	for range 8 { // the report's first allocations (garbage)
		sink = make([]byte, 1<<20)
	}
	if n := gcCycles() - before; n != 0 {
		t.Errorf("%d collections at the report's first 8 MB of garbage, want none", n)
	}
	if p, _ := gcSettings(); p != -1 {
		t.Errorf("GOGC %d in the report phase, want off (the memory limit holds the heap)", p)
	}
	_, limit := gcSettings()
	if h := heapBytes(); limit < int64(h.objects) || limit > int64(h.other+h.objects)*2 {
		t.Errorf("memory limit %d MB for %d MB of objects (%d MB other), want about 1.5× the objects", limit>>20, h.objects>>20, h.other>>20)
	}
	for i := 0; gcCycles() == before; i++ { // garbage until a collection
		if i > 1<<12 {
			t.Fatalf("no collection after %d MB of garbage on %d MB live", i, len(live)>>4)
		}
		sink = make([]byte, 1<<20)
	}
	// after it, GOGC=50 from what it marked, and no limit (the
	// collection's cleanups run on their own goroutine: wait for it)
	select {
	case <-g.switched:
	case <-time.After(5 * time.Second):
		t.Fatal("the report's first collection ran no cleanup in 5 s")
	}
	if p, l := gcSettings(); p != reportGCPercent || l != math.MaxInt64 {
		t.Fatalf("GOGC %d, memory limit %d after the report's first collection; want %d and none", p, l, reportGCPercent)
	}
	restore()
	if p, l := gcSettings(); p != gcphase.Track || l != math.MaxInt64 {
		t.Errorf("GOGC %d, memory limit %d after the report phase; want tracking's %d back and none", p, l, gcphase.Track)
	}

	// restored before its first collection, the phase leaves the
	// settings alone when that collection's cleanup comes
	g = startReportGC()
	g.restore()
	g.collected()
	if p, l := gcSettings(); p != gcphase.Track || l != math.MaxInt64 {
		t.Errorf("GOGC %d, memory limit %d after a collection past the report phase; want %d and none", p, l, gcphase.Track)
	}
	restoreTrack()
	runtime.KeepAlive(live)
}

// gcSettings reads GOGC (-1: off) and the memory limit without setting
// them.
func gcSettings() (percent int, limit int64) {
	s := []metrics.Sample{{Name: "/gc/gogc:percent"}, {Name: "/gc/gomemlimit:bytes"}}
	metrics.Read(s)
	percent = int(s[0].Value.Uint64())
	if percent == 0 && s[0].Value.Kind() == metrics.KindUint64 {
		percent = -1 // (GOGC=off reads as 0)
	}
	return percent, int64(s[1].Value.Uint64())
}

var sink []byte

// gcCycles returns the collections completed so far.
func gcCycles() uint64 {
	s := []metrics.Sample{{Name: "/gc/cycles/total:gc-cycles"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// TestGCReportPhaseEnv: an environment's GOGC is kept through the report;
// with GOMEMLIMIT, its limit is kept and the report runs at
// reportGCPercent.
func TestGCReportPhaseEnv(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(1 << 40))
	for _, tc := range []struct {
		gogc, memlimit string
		percent        int
	}{
		{"100", "", 100},
		{"", "2GiB", reportGCPercent},
		{"100", "2GiB", 100},
	} {
		t.Setenv("GOGC", tc.gogc)
		t.Setenv("GOMEMLIMIT", tc.memlimit)
		restore := gcReportPhase()
		p := debug.SetGCPercent(100)
		debug.SetGCPercent(p)
		limit := debug.SetMemoryLimit(-1)
		restore()
		if p != tc.percent || limit != 1<<40 {
			t.Errorf("GOGC=%q GOMEMLIMIT=%q: the report at GOGC %d, limit %d; want %d and the limit unchanged", tc.gogc, tc.memlimit, p, limit, tc.percent)
		}
		if p := debug.SetGCPercent(100); p != 100 {
			t.Errorf("GOGC=%q GOMEMLIMIT=%q: GOGC %d after the report, want 100 back", tc.gogc, tc.memlimit, p)
		}
	}
}

// TestEvictingGC: stats, sessions and expert (of one capture point or
// two) track at gcphase.Grow until their tracker evicts a session, then
// call evictingGC once (which goes on at gcphase.Track); without an
// eviction they never call it.
func TestEvictingGC(t *testing.T) {
	t.Setenv("GOGC", "") // (empty: unset, for gcphase.Set)
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	const capture = td + "rxe/pt_write.pcap" // three sessions, one after another
	var mu sync.Mutex
	var at []int // GOGC at each call
	prev := evictingGC
	t.Cleanup(func() { evictingGC = prev })
	evictingGC = func() {
		p := debug.SetGCPercent(100)
		debug.SetGCPercent(p)
		mu.Lock()
		at = append(at, p)
		mu.Unlock()
		prev()
	}
	calls := func() []int {
		mu.Lock()
		defer mu.Unlock()
		c := at
		at = nil
		return c
	}
	for _, cmd := range []string{"stats", "sessions", "expert"} {
		if _, errOut, code := run(t, nil, cmd, "-r", capture, "--max-sessions", "1"); code != 0 {
			t.Fatalf("%s --max-sessions 1: exit %d: %s", cmd, code, errOut)
		}
		if c := calls(); len(c) != 1 || c[0] != gcphase.Grow {
			t.Errorf("%s --max-sessions 1: called at GOGC %v, want once, at %d", cmd, c, gcphase.Grow)
		}
		run(t, nil, cmd, "-r", capture)
		if c := calls(); len(c) != 0 {
			t.Errorf("%s without eviction: called at GOGC %v, want never", cmd, c)
		}
	}
	// two capture points: each capture's tracking starts at Grow
	if _, errOut, code := run(t, nil, "stats", "-r", capture, "-r", capture, "--max-sessions", "1"); code != 0 {
		t.Fatalf("stats -r A -r B --max-sessions 1: exit %d: %s", code, errOut)
	}
	if c := calls(); len(c) != 2 || c[0] != gcphase.Grow || c[1] != gcphase.Grow {
		t.Errorf("stats -r A -r B --max-sessions 1: called at GOGC %v, want twice, at %d", c, gcphase.Grow)
	}
	if p := debug.SetGCPercent(100); p != 100 {
		t.Errorf("GOGC %d after the commands, want 100 back", p)
	}
}
