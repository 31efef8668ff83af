package stream

import (
	"os"
	"runtime"
)

// readAhead turns on the capture reader's read-ahead (capture.Reader.ReadAhead)
// when a second core can read while this one parses: from two Ps, for
// files (a path or a file on stdin), not pipes, whose reads of at most 64
// KiB each cost a hand-off (cat F | rocetap stats -r -, 1M packets: 0.81
// CPU s against 0.60 without, cat included), nor live captures, nor the
// TUI's ReadAt, whose spool follower waits on its own.
// ROCETAP_READAHEAD=0 turns it off and 1 on whatever the Ps, to compare.
//
// On one P it would only add hand-offs between two goroutines taking
// turns on one core.
func (s *Source) readAhead() {
	switch os.Getenv("ROCETAP_READAHEAD") {
	case "0":
		return
	case "1":
	default:
		if runtime.GOMAXPROCS(0) < 2 {
			return
		}
	}
	s.r.ReadAhead()
}
