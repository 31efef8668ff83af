// Package gcphase sets the garbage collector for a phase of a run: the
// tracking of a capture (analyze's, and rocetap tui's index build), when
// the heap grows to what the run keeps with next to no garbage. The
// report phase's setting, which depends on the heap the tracking left,
// is internal/cli's (gcReportPhase).
package gcphase

import (
	"os"
	"runtime/debug"
)

// Track is the GOGC of a tracking phase (analyze's, and rocetap tui's
// index build). The heap is then the tracker's sessions (and the index),
// which live until the report, and next to no garbage (nothing is
// allocated per packet): at the default of 100 the collector marked every
// session again each time the heap doubled, 7 cycles on the way to a
// million QP pairs, a third of stats' simulated last-level read misses
// there. At 400, 2 cycles: 1.7M fewer of those misses (of 11.8M) and 3%
// fewer instructions (callgrind, stats on 1M pairs), for a peak RSS of
// 490 MB against 459 MB (one run each). Not higher once sessions are
// evicted: at 1000 (GOGC set in the environment, 2026-11-27) sessions
// on 100,000 QP pairs ran no cycle and took 0.159 CPU s against 0.177,
// but once --max-sessions evicts, every evicted session is garbage, and
// the heap grows to GOGC's goal before it is collected: stats on a
// million pairs with --max-sessions 100000 peaked at 361 MB of RSS
// against 235 MB at 400. So analyze tracks at Grow until its tracker
// evicts, and at Track from then on; rocetap tui builds its index at
// Track throughout (internal/cli/tui.go says why).
const Track = 400

// Grow is the GOGC of a tracking phase until the tracker evicts its
// first session (flow.Options.OnEvicting, where the phase switches to
// Track): the heap is then all sessions still held, and a collection
// frees next to nothing. At 400 a million QP pairs took two cycles, the
// second marking about 100 MB of sessions; at 1000, one, of about
// 45 MB: stats took 1.206 CPU s against 1.230 (7 interleaved runs, GOGC
// set in the environment). It is not better at every size: a heap that
// ends between Grow's first collection (44 MB) and Track's second
// (100 MB), about 130,000 to 290,000 QP pairs, is marked once at up to
// 44 MB instead of once at 20 (a few ms more); from 100 MB on, Track
// marks 20 + 100 MB or more where Grow marks 44 until 484 MB (rocetap
// tui's index, whose heap is larger a pair, stays at Track: its 100,000
// pairs land in that band). Past the first eviction, Track holds the
// garbage of evicted sessions as before. Garbage that is not sessions
// (an expert event's text that a command counts and drops) piles up to
// ten times the heap held, not four, before a collection.
const Grow = 1000

// Set sets GOGC to percent for a phase of the run (tracking, the
// report), unless the environment sets GOGC: the user's setting is kept
// throughout. It returns what puts the previous setting back.
func Set(percent int) (restore func()) {
	if os.Getenv("GOGC") != "" {
		return func() {}
	}
	prev := debug.SetGCPercent(percent)
	return func() { debug.SetGCPercent(prev) }
}

// Switch sets GOGC to percent within a phase Set began (Set's restore
// still puts back what was before the phase), unless the environment
// sets GOGC.
func Switch(percent int) {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(percent)
	}
}
