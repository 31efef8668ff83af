package stream

import (
	"errors"
	"io"
	"os"
	"sync/atomic"
	"time"

	"github.com/rocetap/rocetap/capture"
	"github.com/rocetap/rocetap/decode"
)

// Source is an open packet source: a capture file, a stream, a live
// capture, or a spool read as it grows. Read it once, with Read or one of
// the passes built on it (Parallel, Track); Stop may be called from any
// goroutine.
type Source struct {
	src    capture.Source
	r      *capture.Reader    // file and stream sources (nil for a live capture)
	live   capture.LiveSource // nil unless live
	follow *follow            // a growing spool's reader (nil otherwise)
	size   int64              // bytes (0: unknown), for the progress line
	prog   *progress
	max    int // stop after this many packets (0: all)
	stop   atomic.Bool
	stream bool   // stdin is a pipe or another stream (IsStream)
	idle   func() // OnIdle's function, for streams
}

// Open opens a capture file (pcap, pcapng or ERF) in format ("" detects
// it; see capture.OpenFormat). Path "-" reads the stream stdin instead
// (nil: os.Stdin).
func Open(path, format string, stdin io.Reader) (*Source, error) {
	if path == "-" {
		if stdin == nil {
			stdin = os.Stdin
		}
		s := &Source{stream: IsStream(stdin)}
		in := stdin
		if s.stream {
			// Before a read that may wait for the writer, OnIdle's
			// function runs (decode flushes what it printed).
			in = &waitReader{r: stdin, s: s}
		}
		r, err := capture.NewReaderFormat(in, format)
		if err != nil {
			return nil, err
		}
		s.src, s.r = r, r
		if !s.stream { // a file on stdin
			s.readAhead()
		}
		return s, nil
	}
	var size int64
	if st, err := os.Stat(path); err == nil {
		size = st.Size()
	}
	r, err := capture.OpenFormat(path, format)
	if err != nil {
		return nil, err
	}
	s := &Source{src: r, r: r, size: size}
	s.readAhead()
	return s, nil
}

// ReadAt reads the capture in f from its start, in order, through ReadAt:
// f's own offset is left alone, so the caller can read packets again from
// f at random while this source reads on (the TUI's index). name names the
// capture in errors. With sp, f is sp's file, still being written: at its
// end the source waits for more until the writer is finished, and the
// writer's error, if any, ends it after the last byte written.
func ReadAt(f io.ReaderAt, name string, sp *Spool) (*Source, error) {
	return ReadAtFormat(f, name, "", sp)
}

// ReadAtFormat is ReadAt with the capture's format given (pcap, pcapng,
// erf; "" detects it), for a file whose format cannot be detected.
func ReadAtFormat(f io.ReaderAt, name, format string, sp *Spool) (*Source, error) {
	s := &Source{}
	var in io.Reader = io.NewSectionReader(f, 0, 1<<62)
	if sp != nil {
		s.follow = &follow{f: f, sp: sp}
		in = s.follow
	}
	r, err := capture.NewNamedReaderFormat(in, name, format)
	if err != nil {
		return nil, err
	}
	s.src, s.r = r, r
	return s, nil
}

// Live reads a live capture. Stop stops the capture: the packets already
// received are still read, then the source ends.
func Live(l capture.LiveSource) *Source { return &Source{src: l, live: l} }

// OnIdle sets what a source reading a growing spool does before it waits
// for more of it (the TUI shows what it has indexed); other sources never
// wait.
func (s *Source) OnIdle(fn func()) {
	if s.follow != nil {
		s.follow.idle = fn
	}
	s.idle = fn
}

// IsStream says whether in is a stream whose packets come as they are
// made (a pipe, a terminal, a socket), not a regular file read as fast as
// the disk allows.
func IsStream(in io.Reader) bool {
	f, ok := in.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && !st.Mode().IsRegular()
}

// Live says whether the source's packets come as they are made: a live
// capture, or a stream on stdin (IsStream). Its consumers print each
// packet as it comes (decode flushes at least every 100 ms and before
// every wait) instead of in batches.
func (s *Source) Live() bool { return s.live != nil || s.stream }

// waitReader runs the source's idle function before each read of a
// stream: the read may wait for the writer.
type waitReader struct {
	r io.Reader
	s *Source
}

func (w *waitReader) Read(p []byte) (int, error) {
	if w.s.idle != nil {
		w.s.idle()
	}
	return w.r.Read(p)
}

// ShowProgress prints the progress line (bytes of total, packets/s, time
// left) on w while the source is read, when its size is known; Close
// clears it. Call it only when w is a terminal.
func (s *Source) ShowProgress(w io.Writer) {
	if s.size > 0 && s.r != nil && s.prog == nil {
		s.prog = startProgress(w, s.size)
	}
}

// StopAfter makes Read end after n packets (0: no limit).
func (s *Source) StopAfter(n int) { s.max = n }

// Stop ends the reading: a live capture returns the packets it already
// received, then ends; another source ends before its next packet.
func (s *Source) Stop() {
	if s.live != nil {
		s.live.Stop()
		return
	}
	s.stop.Store(true)
}

// StopOn calls Stop at the first signal on sigs or after d (0: never),
// whichever comes first. cancel ends the watch.
func (s *Source) StopOn(sigs <-chan os.Signal, d time.Duration) (cancel func()) {
	done := make(chan struct{})
	go func() {
		var timeout <-chan time.Time
		if d > 0 {
			t := time.NewTimer(d)
			defer t.Stop()
			timeout = t.C
		}
		select {
		case <-sigs:
		case <-timeout:
		case <-done:
			return
		}
		s.Stop()
	}()
	return func() { close(done) }
}

// Offset is the file offset of the record last read (0 for a live
// capture).
func (s *Source) Offset() int64 {
	if s.r == nil {
		return 0
	}
	return s.r.Offset()
}

// DataOffset is the file offset of data, a packet's bytes the last Read
// callback got (see capture.Reader.DataOffset); -1 for a live capture.
func (s *Source) DataOffset(data []byte) int64 {
	if s.r == nil {
		return -1
	}
	return s.r.DataOffset(data)
}

// Close clears the progress line and closes the source (a file it
// opened, a live capture; never stdin).
func (s *Source) Close() error {
	if s.prog != nil {
		s.prog.stop()
		s.prog = nil
	}
	return s.src.Close()
}

// Packet is a packet as Read hands it on.
type Packet struct {
	Data   []byte // its bytes: valid only during the callback
	Info   capture.PacketInfo
	Number int // 1-based, in the order read

	// Times in nanoseconds since the epoch (cheaper than time.Time.Sub
	// per packet): this packet's, the first packet's, the previous one's.
	ns, first, prev int64
}

// SetFrame sets f to the packet's frame: number, times, length on the
// wire, interface (decoding sets the rest).
func (pk *Packet) SetFrame(f *decode.Frame) {
	setFrame(f, pk.Number, pk.Info.Timestamp, pk.ns, pk.first, pk.prev, pk.Info.Length, pk.Info.InterfaceIndex)
}

// Read reads the source to its end and calls fn with every packet, in
// order. It returns nil at the end of the source, after Stop or
// StopAfter's count, or when fn returns ErrStop; fn's other errors as they
// are; and a *CorruptError when a capture cannot be read to its end (a
// live capture's errors as they are). Read the source once.
//
// This is the one loop over a packet source: every command, the TUI's
// index, live capture and edit read through it.
func (s *Source) Read(fn func(pk *Packet) error) error {
	pk := new(Packet)
	var err error
	for !s.stop.Load() {
		if s.r != nil {
			// NextInto, not Next: Next's PacketInfo result is copied
			// three times on its way into pk, 40 instructions a packet
			// (callgrind, rocetap stats with GOMAXPROCS=1).
			pk.Data, err = s.r.NextInto(&pk.Info)
		} else {
			pk.Data, pk.Info, err = s.src.Next()
		}
		if err != nil {
			switch {
			case err == io.EOF: // a capture reader's clean end is io.EOF itself
				return nil
			case s.live != nil:
				if errors.Is(err, io.EOF) {
					return nil
				}
				return err
			}
			return &CorruptError{Packets: pk.Number, Err: err}
		}
		pk.Number++
		ns := pk.Info.Timestamp.UnixNano()
		if pk.Number == 1 {
			pk.ns, pk.first = ns, ns
		}
		pk.prev, pk.ns = pk.ns, ns
		if err := fn(pk); err != nil {
			if err == ErrStop {
				return nil
			}
			return err
		}
		if s.prog != nil && pk.Number&4095 == 0 {
			s.prog.update(s.r.Offset(), pk.Number)
		}
		if pk.Number == s.max {
			return nil
		}
	}
	return nil
}
