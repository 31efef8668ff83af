// Package tui is rocetap's terminal UI: Wireshark's three panes (packet
// list, detail tree, bytes) plus RDMA views, over a packet index that
// keeps 32 bytes per packet and reads packets again from the file when
// they are shown. It only wires views to capture/, decode/, flow/ and
// hca/: the protocol logic is theirs.
package tui

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rocetap/rocetap/capture"
	"github.com/rocetap/rocetap/decode"
	"github.com/rocetap/rocetap/flow"
)

// entry is one packet of the index: 32 bytes.
type entry struct {
	off    int64  // file offset of the packet's bytes
	ts     int64  // UnixNano
	caplen uint32 // bytes captured (low 28 bits); link type slot (high 4)
	wire   uint32 // bytes on the wire
	sess   uint32 // tracker session ID (0: none)
	ev     uint32 // decode.Event bits the tracker set
}

const (
	caplenBits = 28
	caplenMask = 1<<caplenBits - 1
	maxLinks   = 1 << (32 - caplenBits)
	chunkBits  = 16 // entries are kept in chunks of 65536, so growing never copies them
	chunkSize  = 1 << chunkBits
)

// Index is what the TUI knows of every packet of a capture: where its
// bytes are, when it came, its session and its findings. Build fills it in
// the background; everything else may run meanwhile.
type Index struct {
	f    *os.File // the capture (or the spool of a stream)
	name string

	mu     sync.RWMutex
	chunks [][]entry
	n      int // entries
	links  []decode.LinkType
	// Err is what stopped the index early: a corrupt file (a
	// *capture.FormatError, after every good packet before it).
	err  error
	done bool

	read  atomic.Int64 // bytes read, for the progress indicator
	size  int64        // file size (0: unknown, a stream)
	start time.Time    // first packet's time

	tracker *flow.Tracker
	expert  flow.ExpertLog
	trackMu sync.Mutex // the tracker's tables and the expert log, read by the views while Build runs

	// growing: another goroutine still writes the file (a stream's or a
	// live capture's spool); closed when it is complete.
	growing <-chan struct{}
}

// OpenIndex opens a capture file for indexing. Call Build to fill it.
func OpenIndex(path string) (*Index, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("cannot open capture %q: %w", path, err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	ix := &Index{f: f, name: path}
	if st.Mode().IsRegular() {
		ix.size = st.Size()
	}
	return ix, nil
}

// OpenGrowing opens a file another goroutine is still writing (the spool
// of a stream or a live capture): Build reads on at its end until written
// is closed.
func OpenGrowing(path string, written <-chan struct{}) (*Index, error) {
	ix, err := OpenIndex(path)
	if err != nil {
		return nil, err
	}
	ix.size, ix.growing = 0, written
	return ix, nil
}

// follow reads a file that grows until done is closed. idle, when set,
// is called before each wait for more (the index shows what it has).
type follow struct {
	f    *os.File
	off  int64
	done <-chan struct{}
	idle func()
}

func (r *follow) Read(p []byte) (int, error) {
	for {
		n, err := r.f.ReadAt(p, r.off)
		r.off += int64(n)
		if n > 0 || !errors.Is(err, io.EOF) {
			if errors.Is(err, io.EOF) {
				err = nil
			}
			return n, err
		}
		if r.idle != nil {
			r.idle()
		}
		select {
		case <-r.done:
			// One last look: the writer may have written before closing.
			if n, err := r.f.ReadAt(p, r.off); n > 0 {
				r.off += int64(n)
				return n, nil
			} else if err != nil && !errors.Is(err, io.EOF) {
				return 0, err
			}
			return 0, io.EOF
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// Close closes the file.
func (ix *Index) Close() error { return ix.f.Close() }

// Name is the capture's name.
func (ix *Index) Name() string { return ix.name }

// Len returns the number of packets indexed so far.
func (ix *Index) Len() int {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	return ix.n
}

// Done reports whether the index is complete, and what stopped it early.
func (ix *Index) Done() (bool, error) {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	return ix.done, ix.err
}

// Progress returns the bytes read and the file size (0 for a stream).
func (ix *Index) Progress() (int64, int64) { return ix.read.Load(), ix.size }

// Start is the first packet's time (zero before it).
func (ix *Index) Start() time.Time {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	return ix.start
}

// BytesPerPacket is the memory the index takes per packet.
const BytesPerPacket = 32

// at returns entry i; the caller holds mu.
func (ix *Index) at(i int) *entry { return &ix.chunks[i>>chunkBits][i&(chunkSize-1)] }

// Entry describes packet i (0-based).
type Entry struct {
	Number   int // 1-based frame number
	Time     time.Time
	CapLen   int
	Length   int
	LinkType decode.LinkType
	Session  uint32
	Events   decode.Event
	Offset   int64
}

// Entry returns packet i's index entry.
func (ix *Index) Entry(i int) (Entry, bool) {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	if i < 0 || i >= ix.n {
		return Entry{}, false
	}
	e := ix.at(i)
	return Entry{Number: i + 1, Time: time.Unix(0, e.ts), CapLen: int(e.caplen & caplenMask), Length: int(e.wire),
		LinkType: ix.links[e.caplen>>caplenBits], Session: e.sess, Events: decode.Event(e.ev), Offset: e.off}, true
}

// Read reads packet i's bytes into buf (grown as needed) and returns them
// with its entry.
func (ix *Index) Read(i int, buf []byte) ([]byte, Entry, error) {
	e, ok := ix.Entry(i)
	if !ok {
		return nil, e, fmt.Errorf("no packet %d", i+1)
	}
	if cap(buf) < e.CapLen {
		buf = make([]byte, e.CapLen)
	}
	buf = buf[:e.CapLen]
	if _, err := ix.f.ReadAt(buf, e.Offset); err != nil {
		return nil, e, fmt.Errorf("reading packet %d of %s: %w", e.Number, ix.name, err)
	}
	return buf, e, nil
}

// Decode reads and decodes packet i into p (frame fields set as the
// decode command sets them; the analysis is not, see Entry).
func (ix *Index) Decode(i int, p *decode.Packet, buf []byte) ([]byte, error) {
	data, e, err := ix.Read(i, buf)
	if err != nil {
		return buf, err
	}
	start := ix.Start()
	var prev time.Time
	if i > 0 {
		if pe, ok := ix.Entry(i - 1); ok {
			prev = pe.Time
		}
	} else {
		prev = e.Time
	}
	p.Frame = decode.Frame{Number: e.Number, Time: e.Time, TimeRelative: e.Time.Sub(start), TimeDelta: e.Time.Sub(prev), Len: e.Length}
	decode.Decode(p, data, e.LinkType)
	return data, nil
}

// scanBlock is how much of the file Scan reads at once.
const scanBlock = 4 << 20

// Scan calls fn with the bytes and entry of packets from to to-1 (0-based),
// in order, until fn returns false. It reads the file in large blocks, so
// going through every packet (a filter) costs one read per few thousand
// packets, not one per packet. data is valid only during the call.
func (ix *Index) Scan(from, to int, fn func(i int, data []byte, e Entry) bool) error {
	var block []byte
	entries := make([]Entry, 0, 4096)
	for i := from; i < to; {
		// The entries of the next block: consecutive packets whose bytes
		// lie within scanBlock of the first one's.
		entries = entries[:0]
		ix.mu.RLock()
		if i >= ix.n {
			ix.mu.RUnlock()
			return nil
		}
		start := ix.at(i).off
		end := start
		for j := i; j < to && j < ix.n && len(entries) < cap(entries); j++ {
			e := ix.at(j)
			last := e.off + int64(e.caplen&caplenMask)
			if e.off < start || (last-start > scanBlock && len(entries) > 0) {
				break
			}
			end = max(end, last)
			entries = append(entries, Entry{Number: j + 1, Time: time.Unix(0, e.ts), CapLen: int(e.caplen & caplenMask), Length: int(e.wire),
				LinkType: ix.links[e.caplen>>caplenBits], Session: e.sess, Events: decode.Event(e.ev), Offset: e.off})
		}
		ix.mu.RUnlock()
		if cap(block) < int(end-start) {
			block = make([]byte, end-start)
		}
		block = block[:end-start]
		if _, err := ix.f.ReadAt(block, start); err != nil {
			return fmt.Errorf("reading packets %d to %d of %s: %w", i+1, i+len(entries), ix.name, err)
		}
		for _, e := range entries {
			o := e.Offset - start
			if !fn(i, block[o:o+int64(e.CapLen)], e) {
				return nil
			}
			i++
		}
	}
	return nil
}

// BuildOptions configure Build.
type BuildOptions struct {
	// NewTracker, when set, makes the tracker that sees every packet in
	// order, reporting its events to onEvent: sessions, expert events and
	// the per-packet findings kept in the index come from it.
	NewTracker func(onEvent func(*flow.Event)) *flow.Tracker
	// Notify is called (from Build's goroutine) after every chunk of
	// packets and at the end, at most every Every.
	Notify func()
	Every  time.Duration
}

// Build reads the whole capture, in order, and indexes it. It returns at
// the end of the file or at the first error (kept: Done); the packets
// before a corrupt record stay indexed.
func (ix *Index) Build(o BuildOptions) {
	if o.NewTracker != nil {
		ix.trackMu.Lock()
		ix.tracker = o.NewTracker(ix.expert.Add) // Track holds trackMu
		ix.trackMu.Unlock()
	}
	err := ix.build(o)
	if errors.Is(err, io.EOF) && ix.size > 0 {
		ix.read.Store(ix.size) // the whole file was read
	}
	if ix.tracker != nil {
		ix.trackMu.Lock()
		ix.tracker.Flush()
		ix.trackMu.Unlock()
	}
	ix.mu.Lock()
	ix.done = true
	if !errors.Is(err, io.EOF) {
		ix.err = err
	}
	ix.mu.Unlock()
	if o.Notify != nil {
		o.Notify()
	}
}

func (ix *Index) build(o BuildOptions) error {
	var src io.Reader = io.NewSectionReader(ix.f, 0, 1<<62)
	var fol *follow
	if ix.growing != nil {
		fol = &follow{f: ix.f, done: ix.growing}
		src = fol
	}
	r, err := capture.NewNamedReader(src, ix.name)
	if err != nil {
		return fmt.Errorf("%s: %w", ix.name, err)
	}
	defer r.Close()
	p := new(decode.Packet)
	local := make([]entry, 0, 4096)
	var last time.Time // the first chunk is shown at once
	unshown := false   // packets indexed since the last Notify
	flush := func(force bool) {
		ix.mu.Lock()
		for _, e := range local {
			if ix.n>>chunkBits == len(ix.chunks) {
				ix.chunks = append(ix.chunks, make([]entry, chunkSize))
			}
			*ix.at(ix.n) = e
			ix.n++
		}
		ix.mu.Unlock()
		local = local[:0]
		ix.read.Store(r.Offset())
		unshown = true
		if o.Notify != nil && (force || time.Since(last) >= o.Every) {
			last = time.Now()
			unshown = false
			o.Notify()
		}
	}
	defer flush(false)
	if fol != nil {
		// A stream or a live capture: what has come is shown before
		// waiting for more.
		fol.idle = func() {
			if len(local) > 0 || unshown {
				flush(true)
			}
		}
	}
	n := 0
	var first int64
	for {
		data, info, err := r.Next()
		if err != nil {
			return err
		}
		n++
		slot := -1
		for i, l := range ix.links {
			if l == info.LinkType {
				slot = i
			}
		}
		if slot < 0 {
			if len(ix.links) == maxLinks {
				return fmt.Errorf("%s: packet %d: more than %d link types", ix.name, n, maxLinks)
			}
			ix.mu.Lock()
			ix.links = append(ix.links, info.LinkType)
			ix.mu.Unlock()
			slot = len(ix.links) - 1
		}
		ts := info.Timestamp.UnixNano()
		if n == 1 {
			first = ts
			ix.mu.Lock()
			ix.start = info.Timestamp
			ix.mu.Unlock()
		}
		_ = first
		e := entry{off: r.DataOffset(data), ts: ts, caplen: uint32(len(data)) | uint32(slot)<<caplenBits, wire: uint32(info.Length)}
		if ix.tracker != nil {
			p.Frame = decode.Frame{Number: n, Time: info.Timestamp, Len: info.Length}
			decode.Decode(p, data, info.LinkType)
			ix.trackMu.Lock()
			ix.tracker.Track(p)
			ix.trackMu.Unlock()
			e.sess, e.ev = p.Analysis.Session, uint32(p.Analysis.Events)
		}
		local = append(local, e)
		if len(local) == cap(local) {
			flush(false)
		}
	}
}

// WithTracker runs fn with the tracker (nil without one) and the expert
// log, holding them still while the index grows.
func (ix *Index) WithTracker(fn func(t *flow.Tracker, expert *flow.ExpertLog)) {
	ix.trackMu.Lock()
	defer ix.trackMu.Unlock()
	fn(ix.tracker, &ix.expert)
}
