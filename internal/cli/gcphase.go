package cli

import (
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"

	"github.com/rocetap/rocetap/internal/gcphase"
)

// The collector's settings for the two phases of an analysis: tracking
// (the heap grows to the sessions and holds next to no garbage:
// gcphase.Grow until the tracker evicts a session, gcphase.Track from
// then on: evictingGC; rocetap tui's index build at gcphase.Track) and the
// report (the heap no longer grows; the report makes garbage, some KB a
// session for JSON), here.

// reportGCPercent is the GOGC of the report phase (the default is 100):
// at the default the garbage of a JSON report piled up to the size of
// the sessions (1M of them: 590 MB live, 1.2 GB peak).
const reportGCPercent = 50

// evictingGC is what the trackers of a tracking phase begun at
// gcphase.Grow call before their first eviction (flow.Options.OnEvicting:
// analyze's): from then on each evicted
// session is garbage, and the phase goes on at gcphase.Track. (A
// variable: its test records the calls.)
var evictingGC = func() { gcphase.Switch(gcphase.Track) }

// gcReportPhase sets the collector for the report: the next collection
// comes when the heap has grown by reportGCPercent over its size now,
// and the later ones at GOGC=reportGCPercent. At tracking's GOGC (1000,
// or 400 once sessions are evicted) the last collection marked a fifth
// of the sessions or less, and GOGC
// counts from what the last collection marked: GOGC=50 at once would
// have had the report's first allocation start a collection that marks
// every session again to free nothing (a million: 130 ms of CPU time, a
// twentieth of `sessions`). So until that first collection GOGC is off
// and a soft memory limit (debug.SetMemoryLimit) holds the heap; once it
// has run (the heap it marked is the sessions), GOGC=reportGCPercent
// counts from there, and the limit is put back. An environment that sets
// GOGC keeps it; one that sets GOMEMLIMIT keeps its limit, and the
// report runs at GOGC=reportGCPercent (gcphase.Set). It returns what puts the
// previous settings back.
func gcReportPhase() (restore func()) {
	if os.Getenv("GOMEMLIMIT") != "" {
		return gcphase.Set(reportGCPercent) // (the user's limit is kept)
	}
	if os.Getenv("GOGC") != "" {
		return func() {}
	}
	return startReportGC().restore
}

// startReportGC is gcReportPhase's own setting, when the environment
// leaves the collector to it.
func startReportGC() *reportGC {
	g := &reportGC{prevPercent: debug.SetGCPercent(-1), prevLimit: debug.SetMemoryLimit(-1), switched: make(chan struct{})}
	h := heapBytes()
	live := max(h.objects, h.marked)
	debug.SetMemoryLimit(int64(h.other + live + max(live*reportGCPercent/100, minReportHeadroom)))
	// the cleanup of an object nothing holds runs after a collection has
	// found it unreachable
	runtime.AddCleanup(new(gcSentinel), (*reportGC).collected, g)
	return g
}

// reportGC is the report phase's collector setting (gcReportPhase).
type reportGC struct {
	mu          sync.Mutex
	done        bool // restored
	prevPercent int
	prevLimit   int64
	switched    chan struct{} // closed once collected has run (its cleanup runs on a goroutine of its own)
}

// collected switches to GOGC=reportGCPercent after the report's first
// collection, unless the phase is over.
func (g *reportGC) collected() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.done {
		debug.SetGCPercent(reportGCPercent)
		debug.SetMemoryLimit(g.prevLimit)
	}
	select {
	case <-g.switched: // (a test calls it too)
	default:
		close(g.switched)
	}
}

func (g *reportGC) restore() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.done = true
	debug.SetGCPercent(g.prevPercent)
	debug.SetMemoryLimit(g.prevLimit)
}

// minReportHeadroom is the least the heap may grow by in the report
// before a collection (a small capture's report is a few MB).
const minReportHeadroom = 16 << 20

// gcSentinel is an object whose only use is its cleanup: it holds a
// pointer and is larger than 16 bytes, so it is not in the tiny
// allocator's blocks, whose objects may be freed together late or never.
type gcSentinel struct {
	_ *byte
	_ [16]byte
}

// heapNow is the runtime's memory now and at the last collection.
type heapNow struct {
	objects uint64 // bytes of the heap's objects, live or not yet swept
	marked  uint64 // bytes the last collection marked live
	other   uint64 // what the memory limit counts besides the objects: the runtime's own, stacks, unused parts of spans
}

// heapBytes reads heapNow from runtime/metrics (no stop of the world, as
// runtime.ReadMemStats would).
func heapBytes() heapNow {
	s := []metrics.Sample{
		{Name: "/memory/classes/heap/objects:bytes"},
		{Name: "/gc/heap/live:bytes"},
		{Name: "/memory/classes/total:bytes"},
		{Name: "/memory/classes/heap/free:bytes"},
		{Name: "/memory/classes/heap/released:bytes"},
	}
	metrics.Read(s)
	var v [5]uint64
	for i := range s {
		if s[i].Value.Kind() == metrics.KindUint64 {
			v[i] = s[i].Value.Uint64()
		}
	}
	h := heapNow{objects: v[0], marked: v[1]}
	if t := v[0] + v[3] + v[4]; v[2] > t {
		h.other = v[2] - t
	}
	return h
}
