package cli

import (
	"io"
	"time"
)

// outBuf batches output: printers append to b, and it is written out in
// large chunks.
type outBuf struct {
	w   io.Writer
	b   []byte
	err error
	// live: the packets come as they are made (a pipe, a live capture):
	// what was printed goes out at least every liveFlush (and before the
	// reader waits, see readOptions.out). each: after every packet (-l).
	live, each bool
	last       time.Time // the last flush, when live
}

// liveFlush is the longest a live source's printed packet waits in the
// buffer (tshark prints each packet as it comes).
const liveFlush = 100 * time.Millisecond

const outChunk = 256 << 10

func newOutBuf(w io.Writer) *outBuf { return &outBuf{w: w, b: make([]byte, 0, outChunk+64<<10)} }

// next returns the buffer ready for the bytes of packet i (from 0): sep
// (JSON's ",\n") before all but the first.
func (o *outBuf) next(i int, sep []byte) []byte {
	if i > 0 && sep != nil {
		o.b = append(o.b, sep...)
	}
	return o.b
}

// emitted flushes after a packet that must go out as it comes: from a
// live source, or with -l (each).
func (o *outBuf) emitted(live bool) {
	if live || o.each {
		o.maybeFlush()
	}
}

func (o *outBuf) maybeFlush() {
	switch {
	case len(o.b) >= outChunk, o.each:
		o.flush()
	case o.live && len(o.b) > 0 && time.Since(o.last) >= liveFlush:
		o.flush()
	}
}

func (o *outBuf) flush() {
	if len(o.b) > 0 && o.err == nil {
		_, o.err = o.w.Write(o.b)
	}
	o.b = o.b[:0]
	if o.live || o.each {
		o.last = time.Now()
	}
}
