package cli

import "io"

// outBuf batches output: printers append to b, and it is written out in
// large chunks.
type outBuf struct {
	w   io.Writer
	b   []byte
	err error
}

const outChunk = 256 << 10

func newOutBuf(w io.Writer) *outBuf { return &outBuf{w: w, b: make([]byte, 0, outChunk+64<<10)} }

func (o *outBuf) maybeFlush() {
	if len(o.b) >= outChunk {
		o.flush()
	}
}

func (o *outBuf) flush() {
	if len(o.b) > 0 && o.err == nil {
		_, o.err = o.w.Write(o.b)
	}
	o.b = o.b[:0]
}
