package stream

import (
	"os"
	"runtime"
)

// readAhead turns on the capture reader's read-ahead (capture.Reader.ReadAhead)
// when asked: ROCETAP_READAHEAD=1, from two Ps, for files (a path or a file
// on stdin), not pipes, whose reads of at most 64 KiB each cost a hand-off
// (cat F | rocetap stats -r -, 1M packets: 0.81 CPU s against 0.60
// without, cat included), nor live captures, nor the TUI's ReadAt, whose
// spool follower waits on its own.
//
// It is off by default: it buys wall time with CPU time, and CPU seconds
// are what rocetap is measured by. On 2 cores with the second idle it took
// 13-20% off the wall time of stats and decode for 12-15% more CPU
// (1M packets, 5 interleaved runs, load 0.2), but in make bench's run on
// the same machine (2026-11-26, commit b826b85) all cores cost 1.24-1.49x
// the CPU of one core and were 6-14% slower in wall time as well, which
// failed the CPU-ratio targets (limitprobe 2.83x unchecked on all cores
// against 1.36x on one). On 2026-11-27 (commit a27e6a6) make bench
// measured it 16% faster in wall time for 6% more CPU (stats, idle
// machine), but with one busy loop beside it (not pinned) stats took
// 0.221 s of wall time against 0.209 without it on all cores and 0.210
// pinned to one (taskset -c 0), and sessions 0.220 against 0.207 without
// it (9 interleaved runs): 5.2% slower than one core, past the 5% the
// default core count may lose to one core when the other is busy. See
// minParallelProcs.
func (s *Source) readAhead() {
	if os.Getenv("ROCETAP_READAHEAD") != "1" || runtime.GOMAXPROCS(0) < 2 {
		return
	}
	s.r.ReadAhead()
}
