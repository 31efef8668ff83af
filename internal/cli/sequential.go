package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"time"

	"github.com/rocetap/rocetap/capture"
	"github.com/rocetap/rocetap/decode"
	"github.com/rocetap/rocetap/decode/filter"
	"github.com/rocetap/rocetap/flow"
	"github.com/rocetap/rocetap/hca"
	"github.com/rocetap/rocetap/mpt"
)

// mptFlagUsage is the help of --mpt, shared by decode, sessions, stats and
// expert.
const mptFlagUsage = "check every remote access (RETH, AtomicETH, IETH) sent to the responder against this MPT file (docs/mpt-format.md)"

// trackMPT loads the MPT file of --mpt and builds the responder model the
// tracker checks accesses against; path "" gives nil (no checks). A
// problem in the file is mpt's *Error (file:line:col: $.path: what).
func trackMPT(path string, mf *modelFlags) (*hca.Model, error) {
	if path == "" {
		return nil, nil
	}
	opt, err := mf.options(hca.ProfileIBTA)
	if err != nil {
		return nil, err
	}
	f, err := mpt.Load(path)
	if err != nil {
		var me *mpt.Error
		if errors.As(err, &me) {
			return nil, err
		}
		return nil, fmt.Errorf("--mpt: %w", err)
	}
	// The profile changes how a responder answers, not what the MPT
	// allows; an unknown one is the replay's concern.
	opt.Profile, _ = hca.ProfileByName(f.Profile)
	m, err := hca.NewModel(&f.Config, opt)
	if err != nil {
		return nil, fmt.Errorf("--mpt %s: %w", path, err)
	}
	return m, nil
}

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
	dec, r, prog, closeInput, err := openInput(o, ios, to.skipCRCs)
	if err != nil {
		return 0, err
	}
	defer closeInput()
	if runtime.GOMAXPROCS(0) > 1 && os.Getenv("ROCETAP_WORKERS") != "1" {
		return trackBatches(r, prog, dec, to)
	}
	return trackSequential(r, prog, dec, to)
}

// trackSequential is runTracked on one goroutine: read, decode, track and
// hand on each packet in turn.
func trackSequential(r *capture.Reader, prog *progress, dec *decode.Decoder, to trackOptions) (int, error) {
	p := new(decode.Packet)
	var first, prev int64 // ns since the epoch: cheaper than time.Time.Sub per packet
	n, passed := 0, 0
	for {
		data, info, err := r.Next()
		if err != nil {
			return passed, to.finish(err)
		}
		n++
		ns := info.Timestamp.UnixNano()
		if n == 1 {
			first, prev = ns, ns
		}
		p.Frame = decode.Frame{Number: n, Time: info.Timestamp, TimeRelative: time.Duration(ns - first),
			TimeDelta: time.Duration(ns - prev), Len: info.Length, Interface: info.InterfaceIndex}
		prev = ns
		dec.Decode(p, data, info.LinkType)
		if prog != nil && n&4095 == 0 {
			prog.update(r.Offset(), n)
		}
		if !to.pass(p, &passed) {
			return passed, nil
		}
	}
}

// pass tracks p, filters it and hands it on; it returns false to stop.
func (to *trackOptions) pass(p *decode.Packet, passed *int) bool {
	if to.tracker != nil {
		to.tracker.Track(p)
	}
	if to.filter != nil && !to.filter.Match(p) {
		return true
	}
	*passed++
	if to.each != nil && !to.each(p) {
		return false
	}
	return to.limit <= 0 || *passed < to.limit
}

// trackBatches is runTracked with more than one core: a reader goroutine
// reads the capture and copies packets into batches (as runPipeline's
// does) while this goroutine decodes, tracks, filters and hands them on in
// file order. Measured on 2 cores, this split beats a third stage that
// decodes in parallel: the tracker is fast, and every hand-off costs.
func trackBatches(r *capture.Reader, prog *progress, dec *decode.Decoder, to trackOptions) (int, error) {
	free := make(chan *batch, inFlight)
	work := make(chan *batch, inFlight)
	order := make(chan *batch, inFlight)
	done := make(chan struct{})
	for range inFlight {
		free <- &batch{frames: make([]decode.Frame, batchSize), spans: make([]span, batchSize),
			links: make([]decode.LinkType, batchSize), ready: make(chan struct{}, 1)}
	}
	go readBatches(r, prog, free, work, order, done)
	// Batches need no work here before they come in order.
	go func() {
		for b := range work {
			b.ready <- struct{}{}
		}
	}()
	p := new(decode.Packet)
	defer func() {
		close(done)
		for b := range order { // let the reader stop
			<-b.ready
		}
	}()
	passed := 0
	for b := range order {
		<-b.ready
		for i := 0; i < b.n; i++ {
			p.Frame = b.frames[i]
			sp := b.spans[i]
			dec.Decode(p, b.arena[sp.off:sp.end:sp.end], b.links[i])
			if !to.pass(p, &passed) {
				return passed, nil
			}
		}
		if b.err != nil {
			return passed, to.finish(b.err)
		}
		free <- b
	}
	return passed, to.finish(io.EOF)
}

// finish ends the capture at err (io.EOF: its end): the tracker reports
// what is still open; a corrupt file is an exit status 2 error.
func (to *trackOptions) finish(err error) error {
	if to.tracker != nil {
		to.tracker.Flush()
	}
	if err == io.EOF {
		return nil
	}
	return &exitError{code: 2, err: err}
}
