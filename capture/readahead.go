package capture

import (
	"fmt"
	"io"
)

// Read-ahead: a goroutine reads the input (read(2) from the page cache, a
// pipe, a decompressor) into large buffers while the caller of Next
// parses the previous one in place. Nothing is copied but the tail of a
// record that straddles two buffers: each buffer keeps aheadHead bytes
// free at its front, and the tail is copied there, just before the data
// that continues it. Buffers circulate as tokens: aheadBufs of them, one
// parsed while the other is filled.
//
// Sizes measured with rocetap stats on 1M packets of the 1 KiB mix (2
// cores, load 6-8, 11 interleaved runs, median CPU s; bench/run.sh's
// main capture): reading in turn 0.311; read ahead in 2 buffers of 2 MiB
// 0.319, 2 of 1 MiB 0.332, 3 of 1 MiB 0.344, 3 of 2 MiB 0.357; earlier
// runs: 3 of 4 MiB 0.36-0.43, 16 of 1 MiB 0.43, 3 of 256 KiB 0.39. On
// the machine nearly idle (load 1.2, 9 runs, CPU s / wall s), 2 buffers
// of 1 MiB 0.405 / 0.282, 2 MiB 0.405 / 0.292, 4 MiB 0.396 / 0.287, 8 MiB
// 0.446 / 0.331, reading in turn 0.351 / 0.348. Each
// hand-off wakes a thread on the other core (about 3 context switches a
// buffer), so small buffers cost; data written on the other core is
// fetched from its cache, so a larger ring costs too.
const (
	aheadBufSize = 2 << 20  // bytes read into each buffer, after its headroom
	aheadHead    = 64 << 10 // headroom for a straddling record's tail
	aheadBufs    = 2
)

// aheadChunk is one buffer read ahead: its data is buf[head:head+n];
// err is what ended the input after that data (io.EOF at a clean end).
type aheadChunk struct {
	buf []byte
	n   int
	err error
}

type readAhead struct {
	full  chan aheadChunk
	free  chan []byte // tokens back to the goroutine (nil: it allocates one)
	done  chan struct{}
	token bool // r.buf is one of the tokens (not the first buffer nor a grown one)
	// The buffers' sizes: aheadBufSize and aheadHead, smaller in tests
	// (every path taken on small inputs).
	size, head int
}

// ReadAhead makes the reader read its input on a goroutine of its own,
// a buffer ahead of the records Next returns, so that reading overlaps
// parsing on a second core. Packets are not copied and stay valid exactly
// as long as without it (Next, KeepBuffers); errors and their offsets are
// the same. Call it between calls to Next, after the reader was opened;
// it does nothing when the input was already read to its end. After it,
// nothing else may read the io.Reader the reader was made with.
//
// It pays only with a second core (on one, the goroutine takes turns with
// its consumer and only adds hand-offs) and on a regular file, whose
// reads never wait: each buffer is filled whole, compressed or not. A
// stream's buffer is handed on after each read, so that its packets are
// seen as they come: on a pipe that is a hand-off every 64 KiB, which
// cost more than it saved (stream.Open reads ahead files only).
func (r *Reader) ReadAhead() { r.readAhead(aheadBufSize, aheadHead) }

func (r *Reader) readAhead(size, head int) {
	if r.ra != nil || r.eof || r.readErr != nil || r.err != nil || r.src == nil ||
		r.size >= 0 && r.base+int64(r.end) >= r.size { // all of a small file is in the buffer
		return
	}
	ra := &readAhead{
		full: make(chan aheadChunk, aheadBufs),
		free: make(chan []byte, aheadBufs),
		done: make(chan struct{}),
		size: size,
		head: head,
	}
	for range aheadBufs {
		ra.free <- nil
	}
	// The goroutine releases the decompressor once it stops reading:
	// Close cannot wait for a read blocked on a pipe.
	decClose := r.decClose
	r.decClose = nil
	r.ra = ra
	go ra.run(r.src, r.regular, decClose)
}

// run reads src into the free buffers and queues them, until the input
// ends or Close. whole fills each buffer to its end (a regular file:
// reads never wait); a stream's buffer is queued after each read, so that
// its packets are seen as soon as they come.
func (ra *readAhead) run(src io.Reader, whole bool, decClose func()) {
	if decClose != nil {
		defer decClose()
	}
	for {
		var b []byte
		select {
		case b = <-ra.free:
		case <-ra.done:
			return
		}
		if b == nil {
			b = make([]byte, ra.head+ra.size)
		}
		n, zero := 0, 0
		var err error
		for ra.head+n < len(b) {
			m, e := src.Read(b[ra.head+n:])
			n += m
			if e != nil {
				err = e
				break
			}
			if m == 0 {
				if zero++; zero > 100 {
					err = io.ErrNoProgress
					break
				}
				continue
			}
			if !whole {
				break
			}
		}
		select {
		case ra.full <- aheadChunk{buf: b, n: n, err: err}:
		case <-ra.done:
			return
		}
		if err != nil {
			return
		}
	}
}

// fillAhead is fill with read-ahead: it appends the next buffers' data to
// buf[pos:end] until n bytes are there. The usual step moves to the next
// buffer, the unread tail copied into its headroom; a tail longer than the
// headroom (a record of more than 64 KiB) goes with the data after it into
// a buffer of its own, grown as needed.
func (r *Reader) fillAhead(n int) error {
	ra := r.ra
	for r.end-r.pos < n {
		c := <-ra.full
		h := ra.head
		data := c.buf[h : h+c.n]
		t := r.end - r.pos
		switch {
		case t <= h:
			copy(c.buf[h-t:], r.buf[r.pos:r.end])
			r.leave(r.buf, ra.token)
			r.base += int64(r.end - h)
			r.buf, r.pos, r.end, ra.token = c.buf, h-t, h+c.n, true
		case !ra.token && len(r.buf)-r.end >= c.n:
			// A buffer of the reader's own (the first, or a grown one)
			// with room left: append.
			r.end += copy(r.buf[r.end:], data)
			ra.free <- c.buf
		default:
			nb := make([]byte, min(max(2*len(r.buf), t+c.n), maxRecordSize+64+ra.size))
			copy(nb, r.buf[r.pos:r.end])
			copy(nb[t:], data)
			r.leave(r.buf, ra.token)
			r.base += int64(r.pos)
			r.buf, r.pos, r.end, ra.token = nb, 0, t+c.n, false
			ra.free <- c.buf
		}
		if c.err != nil {
			if c.err == io.EOF {
				r.eof = true
				if r.end-r.pos < n {
					return errShort
				}
				return nil
			}
			r.readErr = fmt.Errorf("reading capture %s: %w", quoteName(r.name), c.err)
			if r.end-r.pos < n {
				return r.readErr
			}
			return nil
		}
	}
	return nil
}

// leave gives up old, the buffer the reader moves on from: to the caller
// with KeepBuffers (whose swap returns a buffer it no longer needs), and
// the token back to the goroutine when old was one.
func (r *Reader) leave(old []byte, token bool) {
	if r.swap != nil {
		old = r.swap(old)
		if len(old) < r.ra.head+r.ra.size/2 {
			old = nil // too short to read into: the goroutine allocates one
		}
	}
	if token {
		r.ra.free <- old
	}
}

// stopAhead ends the read-ahead goroutine (Close).
func (r *Reader) stopAhead() {
	if r.ra != nil {
		close(r.ra.done)
		r.ra = nil
	}
}
