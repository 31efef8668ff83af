// Package tui is rocetap's terminal UI: Wireshark's three panes (packet
// list, detail tree, bytes) plus RDMA views, over a packet index that
// keeps 40 bytes per packet and reads packets again from the file when
// they are shown. It only wires views to stream/ (which reads the
// capture and numbers its frames), decode/, flow/ and hca/: the protocol
// logic is theirs.
package tui

import (
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rocetap/rocetap/decode"
	"github.com/rocetap/rocetap/flow"
	"github.com/rocetap/rocetap/stream"
)

// entry is one packet of the index: 40 bytes.
type entry struct {
	off  int64  // file offset of the packet's bytes
	ts   int64  // UnixNano
	clen uint32 // bytes captured (low 24 bits, bigCaplen: in Index.big); slot (high 8 bits)
	wire uint32 // bytes on the wire
	sess uint32 // tracker session ID (0: none)
	ulp  uint32 // the packet's ULP operation (ulpindex.go; in what was padding)
	ev   uint64 // decode.Event bits the tracker set (more than 32 kinds since the MAD, ULP and fabric events)
}

// slot is what the packets of one pcapng interface share: the link type
// and the interface id (frame.interface_id).
type slot struct {
	link  decode.LinkType
	iface int
}

const (
	caplenBits = 24
	caplenMask = 1<<caplenBits - 1
	// bigCaplen marks a packet of 16 MiB or more, whose length is kept
	// aside (the reader accepts records up to 256 MiB; RDMA packets are
	// a few KiB).
	bigCaplen = caplenMask
	maxSlots  = 1 << (32 - caplenBits)
	chunkBits = 16 // entries are kept in chunks of 65536, so growing never copies them
	chunkSize = 1 << chunkBits
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
	slots  []slot
	big    map[int]int // caplen of the packets marked bigCaplen, by index
	// Err is what stopped the index early: a corrupt file (a
	// *stream.CorruptError, after every good packet before it), or the
	// error that cut a stream's or live capture's spool short.
	err  error
	done bool

	read  atomic.Int64 // bytes read, for the progress indicator
	size  int64        // file size (0: unknown, a stream)
	start time.Time    // first packet's time
	first int64        // its UnixNano

	tracker *flow.Tracker
	expert  flow.ExpertLog
	ulp     ulpIndex   // the ULP operations, for the Info column and the ULP view
	trackMu sync.Mutex // the tracker's tables and the expert log, read by the views while Build runs

	// spool: another goroutine still writes the file (a stream's or a
	// live capture's spool).
	spool *stream.Spool

	// dec decodes the packets (-d adds UDP ports); nil is the default
	// decoder. Set before Build.
	dec *decode.Decoder
	// format is the capture's format when it cannot be detected
	// (--format erf); "" detects it. Set before Build.
	format string
}

// SetFormat gives the capture's format (pcap, pcapng, erf) for a file
// whose format cannot be detected. Call it before Build.
func (ix *Index) SetFormat(format string) { ix.format = format }

// SetDecoder makes the index, the list, the views and the filters decode
// with d (rocetap tui -d udp.port==N,infiniband). Call it before Build.
func (ix *Index) SetDecoder(d *decode.Decoder) { ix.dec = d }

// decode decodes a packet as the index was told to.
func (ix *Index) decode(p *decode.Packet, data []byte, lt decode.LinkType) {
	if ix.dec != nil {
		ix.dec.Decode(p, data, lt)
		return
	}
	decode.Decode(p, data, lt)
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

// OpenSpool opens the spool of a stream or a live capture for indexing:
// Build reads on at its end until the spool's writer has finished, and
// ends with the writer's error if it had one.
func OpenSpool(sp *stream.Spool) (*Index, error) {
	ix, err := OpenIndex(sp.Path())
	if err != nil {
		return nil, err
	}
	ix.size, ix.spool = 0, sp
	return ix, nil
}

// Close closes the file.
func (ix *Index) Close() error { return ix.f.Close() }

// Name is the capture's name.
func (ix *Index) Name() string { return ix.name }

// IsCapture says path is the file the index reads (the capture, or the
// spool of a stream).
func (ix *Index) IsCapture(path string) bool {
	a, err := os.Stat(path)
	if err != nil {
		return false
	}
	b, err := ix.f.Stat()
	return err == nil && os.SameFile(a, b)
}

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
const BytesPerPacket = 40

// at returns entry i; the caller holds mu.
func (ix *Index) at(i int) *entry { return &ix.chunks[i>>chunkBits][i&(chunkSize-1)] }

// Entry describes packet i (0-based).
type Entry struct {
	Number    int // 1-based frame number
	Time      time.Time
	CapLen    int
	Length    int
	LinkType  decode.LinkType
	Interface int // pcapng interface id
	Session   uint32
	Events    decode.Event
	Offset    int64
	ulp       uint32 // the ULP tag (ulpindex.go)
	ulpText   string // set by ulpRow: the ULP part of the Info, when the printer cannot make it from the analysis
}

// Entry returns packet i's index entry.
func (ix *Index) Entry(i int) (Entry, bool) {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	if i < 0 || i >= ix.n {
		return Entry{}, false
	}
	return ix.entryLocked(i), true
}

// entryLocked describes packet i; the caller holds mu.
func (ix *Index) entryLocked(i int) Entry {
	e := ix.at(i)
	sl := ix.slots[e.clen>>caplenBits]
	return Entry{Number: i + 1, Time: time.Unix(0, e.ts), CapLen: ix.caplen(i, e), Length: int(e.wire),
		LinkType: sl.link, Interface: sl.iface, Session: e.sess, Events: decode.Event(e.ev), Offset: e.off, ulp: e.ulp}
}

// caplen is packet i's captured length; the caller holds mu.
func (ix *Index) caplen(i int, e *entry) int {
	if n := e.clen & caplenMask; n != bigCaplen {
		return int(n)
	}
	return ix.big[i]
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
	first, prev := ix.times(i)
	stream.SetFrameAt(&p.Frame, e.Number, e.Time, first, prev, e.Length, e.Interface)
	ix.decode(p, data, e.LinkType)
	return data, nil
}

// times returns what packet i's frame times are measured from: the first
// packet's time and the previous packet's (its own for the first), in
// nanoseconds since the epoch.
func (ix *Index) times(i int) (first, prev int64) {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	if i <= 0 || i > ix.n {
		return ix.first, ix.first
	}
	return ix.first, ix.at(i - 1).ts
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
			e := ix.entryLocked(j)
			last := e.Offset + int64(e.CapLen)
			if e.Offset < start || (last-start > scanBlock && len(entries) > 0) {
				break
			}
			end = max(end, last)
			entries = append(entries, e)
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
	if err == nil && ix.size > 0 {
		ix.read.Store(ix.size) // the whole file was read
	}
	if ix.tracker != nil {
		ix.trackMu.Lock()
		ix.tracker.Flush()
		ix.trackMu.Unlock()
	}
	ix.mu.Lock()
	ix.done = true
	ix.err = err
	ix.mu.Unlock()
	if o.Notify != nil {
		o.Notify()
	}
}

func (ix *Index) build(o BuildOptions) error {
	src, err := stream.ReadAtFormat(ix.f, ix.name, ix.format, ix.spool)
	if err != nil {
		return fmt.Errorf("%s: %w", ix.name, err)
	}
	defer src.Close()
	ix.WithTracker(func(t *flow.Tracker, _ *flow.ExpertLog) {
		if t != nil {
			t.SetInterfaceSpeed(src.InterfaceSpeed) // PFC pause times at the interface's if_speed
		}
	})
	p := new(decode.Packet)
	local := make([]entry, 0, 4096)
	var big map[int]int // caplens of local's bigCaplen packets
	var last time.Time  // the first chunk is shown at once
	unshown := false    // packets indexed since the last Notify
	flush := func(force bool) {
		ix.mu.Lock()
		for _, e := range local {
			if ix.n>>chunkBits == len(ix.chunks) {
				ix.chunks = append(ix.chunks, make([]entry, chunkSize))
			}
			*ix.at(ix.n) = e
			ix.n++
		}
		if len(big) > 0 {
			if ix.big == nil {
				ix.big = map[int]int{}
			}
			for i, n := range big {
				ix.big[i] = n
			}
			clear(big)
		}
		ix.mu.Unlock()
		local = local[:0]
		ix.read.Store(src.Offset())
		unshown = true
		if o.Notify != nil && (force || time.Since(last) >= o.Every) {
			last = time.Now()
			unshown = false
			o.Notify()
		}
	}
	defer flush(false)
	// A stream or a live capture: what has come is shown before waiting
	// for more.
	src.OnIdle(func() {
		if len(local) > 0 || unshown {
			flush(true)
		}
	})
	sl, slKey := 0, slot{iface: -1} // the slot of the packet before: usually this one's
	var dec *decode.Decoder         // with a tracker: the index's decoder, prefetching for it
	if ix.tracker != nil {
		dec = stream.PrefetchDecoder(ix.dec, ix.tracker)
	}
	return src.Read(func(pk *stream.Packet) error {
		if key := (slot{pk.Info.LinkType, pk.Info.InterfaceIndex}); key != slKey {
			var err error
			if sl, err = ix.slot(key); err != nil {
				return fmt.Errorf("%s: packet %d: %w", ix.name, pk.Number, err)
			}
			slKey = key
		}
		ts := pk.Info.Timestamp.UnixNano()
		if pk.Number == 1 {
			ix.mu.Lock()
			ix.start, ix.first = pk.Info.Timestamp, ts
			ix.mu.Unlock()
		}
		clen := uint32(len(pk.Data))
		if clen >= bigCaplen {
			if big == nil {
				big = map[int]int{}
			}
			big[pk.Number-1], clen = len(pk.Data), bigCaplen
		}
		e := entry{off: src.DataOffset(pk.Data), ts: ts, clen: clen | uint32(sl)<<caplenBits, wire: uint32(pk.Info.Length)}
		if ix.tracker != nil {
			pk.SetFrame(&p.Frame)
			ix.trackMu.Lock() // (the decoder's prefetch reads the tracker's tables)
			dec.Decode(p, pk.Data, pk.Info.LinkType)
			ix.tracker.Track(p)
			ix.trackMu.Unlock()
			e.sess, e.ev = p.Analysis.Session, uint64(p.Analysis.Events)
			var earlier []int
			if e.ulp, earlier = ix.ulp.record(p); len(earlier) > 0 {
				ix.tagEarlier(earlier, e.ulp, local)
			}
		}
		local = append(local, e)
		if len(local) == cap(local) {
			flush(false)
		}
		return nil
	})
}

// slot returns the slot of a link type and interface, adding it if it is
// new.
func (ix *Index) slot(want slot) (int, error) {
	for i, sl := range ix.slots { // only Build's goroutine changes slots
		if sl == want {
			return i, nil
		}
	}
	if len(ix.slots) == maxSlots {
		return 0, fmt.Errorf("more than %d interfaces (pairs of interface and link type)", maxSlots)
	}
	ix.mu.Lock()
	ix.slots = append(ix.slots, want)
	ix.mu.Unlock()
	return len(ix.slots) - 1, nil
}

// WithTracker runs fn with the tracker (nil without one) and the expert
// log, holding them still while the index grows.
func (ix *Index) WithTracker(fn func(t *flow.Tracker, expert *flow.ExpertLog)) {
	ix.trackMu.Lock()
	defer ix.trackMu.Unlock()
	fn(ix.tracker, &ix.expert)
}
