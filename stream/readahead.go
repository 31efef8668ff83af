package stream

import (
	"os"
	"runtime"
)

// readAhead turns on the capture reader's read-ahead (capture.Reader.ReadAhead)
// when a second core can read while this one parses: from two Ps, for
// files and streams (never a live capture, nor the TUI's ReadAt, whose
// spool follower waits on its own). wr is a stream's waitReader: its idle
// function then runs when the reader waits, on the reader's goroutine,
// not before each read on the read-ahead goroutine. ROCETAP_READAHEAD=0
// turns it off and 1 on whatever the Ps, to compare.
//
// On one P it would only add hand-offs between two goroutines taking
// turns on one core.
func (s *Source) readAhead(wr *waitReader) {
	switch os.Getenv("ROCETAP_READAHEAD") {
	case "0":
		return
	case "1":
	default:
		if runtime.GOMAXPROCS(0) < 2 {
			return
		}
	}
	var wait func()
	if wr != nil {
		wr.ahead = true
		wait = func() {
			if s.idle != nil {
				s.idle()
			}
		}
	}
	s.r.ReadAhead(wait)
}
