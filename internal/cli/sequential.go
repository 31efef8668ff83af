package cli

import (
	"io"
	"time"

	"github.com/rocetap/rocetap/decode"
	"github.com/rocetap/rocetap/decode/filter"
	"github.com/rocetap/rocetap/flow"
)

// trackOptions configure runTracked.
type trackOptions struct {
	tracker  *flow.Tracker
	filter   *filter.Filter
	skipCRCs bool
	limit    int // stop after this many matching packets (0: all)
	// each is called for every packet that passes the filter, after the
	// tracker; it returns false to stop.
	each func(p *decode.Packet) bool
}

// runTracked reads, decodes and tracks every packet in capture order, on
// one goroutine: the tracker's state depends on the order, so this is the
// path for every command that needs it (sessions, stats, expert, and
// decode when the output shows analysis). The filter sees the analysis
// fields. It returns the number of packets passed to each; a corrupt file
// ends with an exit status 2 error after every packet before it went
// through.
func runTracked(o *readOptions, ios IO, to trackOptions) (int, error) {
	dec, err := o.decoder()
	if err != nil {
		return 0, err
	}
	dec.SkipCRCs = to.skipCRCs
	r, size, err := openCapture(o, ios)
	if err != nil {
		return 0, err
	}
	defer r.Close()
	var prog *progress
	if ios.ErrIsTerminal && size > 0 {
		prog = startProgress(ios.ErrOut, size)
		defer prog.stop()
	}
	p := new(decode.Packet)
	var first, prev time.Time
	n, passed := 0, 0
	for {
		data, info, err := r.Next()
		if err != nil {
			if to.tracker != nil {
				to.tracker.Flush()
			}
			if err == io.EOF {
				return passed, nil
			}
			return passed, &exitError{code: 2, err: err}
		}
		n++
		if n == 1 {
			first, prev = info.Timestamp, info.Timestamp
		}
		p.Frame = decode.Frame{Number: n, Time: info.Timestamp, TimeRelative: info.Timestamp.Sub(first),
			TimeDelta: info.Timestamp.Sub(prev), Len: info.Length, Interface: info.InterfaceIndex}
		prev = info.Timestamp
		dec.Decode(p, data, info.LinkType)
		if to.tracker != nil {
			to.tracker.Track(p)
		}
		if prog != nil && n&4095 == 0 {
			prog.update(r.Offset(), n)
		}
		if to.filter != nil && !to.filter.Match(p) {
			continue
		}
		passed++
		if to.each != nil && !to.each(p) {
			return passed, nil
		}
		if to.limit > 0 && passed >= to.limit {
			return passed, nil
		}
	}
}
