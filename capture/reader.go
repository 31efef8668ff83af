package capture

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"
	"unsafe"

	"github.com/gopacket/gopacket/layers"
)

// PacketInfo describes one record. It holds no pointers besides the
// timestamp's location, so it can be filled without allocating.
type PacketInfo struct {
	Timestamp      time.Time       // absolute; zero for pcapng Simple Packet Blocks, which carry none
	CaptureLength  int             // bytes present in data
	Length         int             // original length on the wire
	InterfaceIndex int             // pcapng interface id; 0 for pcap and ERF
	LinkType       layers.LinkType // pcap LINKTYPE_* value (1 Ethernet, 101 raw IP, 113 SLL, 276 SLL2, 247 InfiniBand, 197 ERF, ...)
}

// Source yields packets in file order. data is valid only until the next
// call to Next (zero-copy, reused buffer).
type Source interface {
	Next() (data []byte, info PacketInfo, err error) // io.EOF at a clean end
	Close() error
}

// linkTypeERF is LINKTYPE_ERF: an ERF file's records are handed on whole,
// header included, with this link type (decode unwraps them and names the
// value decode.LinkTypeERF; capture does not import decode).
const linkTypeERF layers.LinkType = 197

const (
	// defaultBufSize is the read buffer's (records larger than this grow
	// it): 256 KiB. With 1 MiB, stats took 0.261 CPU s on the 1M-packet
	// bench capture against 0.234, and -T fields 0.195 against 0.167 (11
	// interleaved runs on one core; 128 KiB and 512 KiB did as well as
	// 256). Likely because the bytes read(2) has just copied are still
	// in the core's L2 cache when the packets are decoded and their
	// ICRCs computed, where a 1 MiB copy had pushed the buffer's start
	// out before it ended (not measured: that machine, a VM, has no
	// cache counters).
	defaultBufSize = 256 << 10
	maxRecordSize  = 256 << 20 // beyond this a record length is corruption
	minBufSize     = 4 << 10
	// standardSnaplen is the largest caplen accepted in a pcap whose header
	// declares a smaller snapshot length (Wireshark's limit for most link
	// types: some writers store a snaplen smaller than what they wrote).
	standardSnaplen = 262144
)

type format uint8

const (
	formatPcap format = iota + 1
	formatPcapng
	formatERF
)

var _ Source = (*Reader)(nil)

// Reader reads a pcap, pcapng or ERF capture. It is not safe for concurrent
// use.
type Reader struct {
	name   string
	format format
	fname  string // Format() value

	src    io.Reader
	closer io.Closer // file owned by the Reader (nil for stdin and NewReader)
	size   int64
	// regular: the input is a regular file (Open), compressed or not
	regular bool

	// buf[pos:end] is unread data; base is the file offset of buf[0].
	buf     []byte
	pos     int
	end     int
	base    int64
	eof     bool // src has no more data
	readErr error
	err     error // sticky error returned by Next

	recOff int64 // offset of the record last returned
	num    int   // packets returned so far

	bigEndian bool

	// pcap
	linkType layers.LinkType
	tsMul    int64 // nanoseconds per fractional timestamp unit (1000 or 1)
	limit    uint32
	snaplen  uint32
	fcsLen   int

	// pcapng
	ifaces []ngInterface
	speeds ifSpeeds // the interfaces' if_speed (speed.go)

	compression string // "gzip", "zstd", "lz4" or "" (compress.go)
	decClose    func() // releases the decompressor, if it must be

	// swap, when set, gives fill a new buffer to move unread bytes into
	// (see KeepBuffers).
	swap func(old []byte) []byte

	ra *readAhead // the read-ahead goroutine's, when on (readahead.go)
}

// Open opens a capture file; path "-" reads standard input. The format is
// detected from the first bytes (see the package documentation).
func Open(path string) (*Reader, error) {
	return OpenFormat(path, "")
}

// OpenFormat is Open with an explicit format: "pcap" (also "pcap-ns"),
// "pcapng", "erf", or "" / "auto" to detect it. Forcing "erf" is the only
// way to read an ERF file whose first records do not look like ERF.
func OpenFormat(path, format string) (*Reader, error) {
	if path == "-" {
		r, err := newReader(os.Stdin, "standard input", -1, format, false)
		return r, err
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, openError(path, err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, openError(path, err)
	}
	if st.IsDir() {
		f.Close()
		return nil, fmt.Errorf("cannot read capture %q: it is a directory, not a capture file", path)
	}
	size := int64(-1)
	if st.Mode().IsRegular() {
		size = st.Size()
	}
	if format == "" && strings.HasSuffix(strings.ToLower(path), ".erf") {
		format = "erf?" // ERF unless a pcap or pcapng magic says otherwise
	}
	// Regular files are read with read(2) into the buffer, not mapped: on
	// the machines measured, mmap was about half as fast on typical RoCE
	// traffic (page faults and TLB misses cost more than the kernel's copy;
	// only all-64-byte-packet files went faster, by a third), and a file
	// truncated while mapped kills the process with SIGBUS.
	//
	// Measured again on 2026-11-27 (2 cores, AMD EPYC, Linux 6.18; rocetap
	// stats, one core, median CPU s of 5-11 interleaved runs), with the
	// mapping read behind a PREFETCHT0 of the next 2 KiB (without it,
	// mapped reading was no faster: the CPU's prefetcher stops at each
	// page) and its pages dropped 4 MiB behind: what it costs depends on
	// how the page cache holds the file, which rocetap cannot see. The
	// bench's capture as gencap wrote it, 4 MiB at a time (large folios):
	// 0.187-0.196 against 0.220-0.225. The same bytes written 4 KiB at a
	// time, as a capture tool writes: 0.273-0.328 against 0.233-0.240; 8
	// KiB: 0.251 against 0.224; 64 KiB: 0.212 against 0.217; a pcapng copy
	// written by editcap: 0.374 against 0.247. At a million QP pairs
	// (sessions, all cores) it gained nothing, 1.310 against 1.302, while
	// the 8-pair capture of as many packets and bytes went from 0.654 to 0.591: the
	// QP-scaling ratio would rise from 1.99 to about 2.2. A goroutine
	// mapping the pages in ahead on the second core (MADV_POPULATE_READ)
	// took 2% off the wall time on large folios and cost 44% more CPU on
	// small ones. So read(2) stays. (The mapped and read(2) figures came
	// from two builds, one copy of each binary: copies of one build were
	// later found to run up to 9% apart, bench/lib.sh's spread_binaries.
	// The prefetch's 20% is one binary's, toggled; the small-folio losses
	// are larger than that spread.)
	r := &Reader{name: path, src: f, closer: f, size: size, regular: size >= 0}
	if err := r.init(format); err != nil {
		r.Close()
		return nil, err
	}
	return r, nil
}

// NewReader reads a capture from a stream (standard input, a pipe, a
// network connection: it never seeks), detecting the format from the first
// bytes. Close does not close r.
func NewReader(r io.Reader) (*Reader, error) {
	return NewReaderFormat(r, "")
}

// NewReaderFormat is NewReader with an explicit format, as in OpenFormat.
func NewReaderFormat(r io.Reader, format string) (*Reader, error) {
	name := ""
	if f, ok := r.(*os.File); ok {
		name = f.Name()
	}
	return newReader(r, name, -1, format, true)
}

// NewNamedReader is NewReader for a stream with a name for its errors (a
// file read through another reader, such as a spool or a section).
func NewNamedReader(r io.Reader, name string) (*Reader, error) {
	return newReader(r, name, -1, "", true)
}

// NewNamedReaderFormat is NewNamedReader with an explicit format, as in
// OpenFormat ("" detects it).
func NewNamedReaderFormat(r io.Reader, name, format string) (*Reader, error) {
	return newReader(r, name, -1, format, true)
}

func newReader(src io.Reader, name string, size int64, format string, sizeHint bool) (*Reader, error) {
	r := &Reader{name: name, src: src, size: size}
	if sizeHint {
		if l, ok := src.(interface{ Len() int }); ok {
			// bytes.Reader, strings.Reader, bytes.Buffer: a small input
			// needs no 256 KiB buffer (this keeps fuzzing fast).
			n := l.Len() + 1
			if n < minBufSize {
				n = minBufSize
			}
			if n < defaultBufSize {
				r.buf = make([]byte, n)
			}
		}
	}
	if err := r.init(format); err != nil {
		return nil, err
	}
	return r, nil
}

// init allocates the buffer if needed and detects and parses the file header.
func (r *Reader) init(format string) error {
	if r.buf == nil {
		n := defaultBufSize
		if r.size >= 0 && r.size+1 < int64(n) {
			n = max(int(r.size)+1, minBufSize)
		}
		r.buf = make([]byte, n)
	}
	r.fcsLen = -1
	if err := r.fill(4); err != nil && err != errShort {
		return err
	}
	if err := r.decompress(); err != nil {
		return err
	}
	if r.compression != "" {
		if err := r.fill(4); err != nil && err != errShort {
			return err
		}
		err := r.initFormat(format)
		var fe *FormatError
		if errors.As(err, &fe) {
			fe.Compression = r.compression
		}
		return err
	}
	return r.initFormat(format)
}

// initFormat detects and parses the file header of the (decompressed)
// input.
func (r *Reader) initFormat(format string) error {
	head := r.buf[r.pos:r.end]
	if len(head) == 0 {
		return &unknownFormatError{file: r.name, empty: true}
	}
	var magic uint32
	if len(head) >= 4 {
		magic = binary.LittleEndian.Uint32(head)
	}
	switch format {
	case "", "auto", "erf?":
		switch magic {
		case 0xa1b2c3d4, 0xd4c3b2a1, 0xa1b23c4d, 0x4d3cb2a1:
			return r.initPcap()
		case ngBlockSHB:
			return r.initPcapng()
		}
		if format == "erf?" || r.looksLikeERF() {
			return r.initERF()
		}
		n := min(len(r.buf[r.pos:r.end]), 16)
		head = r.buf[r.pos : r.pos+n]
		return &unknownFormatError{file: r.name, head: append([]byte(nil), head...), hint: formatHint(head)}
	case "pcap", "pcap-ns":
		return r.initPcap()
	case "pcapng":
		return r.initPcapng()
	case "erf":
		return r.initERF()
	}
	return fmt.Errorf("capture: unknown format %q (want pcap, pcapng, erf or auto)", format)
}

// Format returns the detected format: "pcap", "pcap-ns", "pcapng" or "erf".
func (r *Reader) Format() string { return r.fname }

// Compression returns "gzip", "zstd" or "lz4" for a compressed capture,
// else "".
func (r *Reader) Compression() string { return r.compression }

// Offset returns the byte offset in the file of the header of the record
// last returned by Next.
func (r *Reader) Offset() int64 { return r.recOff }

// PacketNumber returns the 1-based number of the record last returned by
// Next (0 before the first).
func (r *Reader) PacketNumber() int { return r.num }

// Size returns the size of the file in bytes, or -1 when unknown (standard
// input, pipes, NewReader). With Offset it gives reading progress.
func (r *Reader) Size() int64 { return r.size }

// FCSLength returns the number of frame-check-sequence bytes at the end of
// each packet as recorded in a pcap file header, or -1 when the file does not
// say (always for pcapng and ERF).
func (r *Reader) FCSLength() int { return r.fcsLen }

// Next returns the next packet. data is valid until the next call to Next
// or Close. At a clean end of file it returns io.EOF; a corrupt or
// truncated file gives a *FormatError. Errors are sticky.
func (r *Reader) Next() (data []byte, info PacketInfo, err error) {
	data, err = r.NextInto(&info)
	return data, info, err
}

// NextInto is Next filling *info in place: a PacketInfo returned through
// a call is copied more times than it takes to parse a record header, so
// a loop over every packet calls this.
func (r *Reader) NextInto(info *PacketInfo) (data []byte, err error) {
	if r.format == formatPcap && r.err == nil && !r.bigEndian && r.end-r.pos >= pcapRecordHeaderLen {
		// Fast path for the common case, a little-endian pcap record wholly
		// in the buffer: a fifth faster on small packets than the call to
		// nextPcap, which handles everything else the same way.
		off := r.pos
		h := r.buf[off : off+pcapRecordHeaderLen : off+pcapRecordHeaderLen]
		incl := binary.LittleEndian.Uint32(h[8:])
		if n := pcapRecordHeaderLen + int(incl); incl <= r.limit && n <= r.end-off {
			info.Timestamp = time.Unix(int64(binary.LittleEndian.Uint32(h)), int64(binary.LittleEndian.Uint32(h[4:]))*r.tsMul)
			info.CaptureLength = int(incl)
			info.Length = int(binary.LittleEndian.Uint32(h[12:]))
			info.LinkType = r.linkType
			info.InterfaceIndex = 0
			r.pos += n
			r.recOff = r.base + int64(off)
			r.num++
			return r.buf[off+pcapRecordHeaderLen : off+n : off+n], nil
		}
	}
	// The per-format readers fill info in place: returning it through two
	// frames costs more than parsing a record header.
	switch {
	case r.err != nil:
		return nil, r.err
	case r.format == formatPcap:
		return r.nextPcap(info)
	case r.format == formatPcapng:
		return r.nextPcapng(info)
	}
	return r.nextERF(info)
}

// NextBuffered reports whether the record of the next packet is already
// wholly in the reader's buffer, so that the next call to Next or
// NextInto reads nothing and leaves the packets it returned before
// valid (the buffer is moved only to read more). It is false when it
// cannot tell: a record not yet read in full, a pcapng block other than
// a packet's next, an ERF capture, an error.
func (r *Reader) NextBuffered() bool {
	if r.err != nil {
		return false
	}
	b := r.buf[r.pos:r.end]
	switch r.format {
	case formatPcap:
		if len(b) < pcapRecordHeaderLen {
			return false
		}
		incl := r.u32(b[8:])
		return incl <= r.limit && pcapRecordHeaderLen+int(incl) <= len(b)
	case formatPcapng:
		if len(b) < ngMinBlock {
			return false
		}
		t, n := r.u32(b), r.u32(b[4:])
		return (t == ngBlockEPB || t == ngBlockSPB) && n <= uint32(len(b))
	}
	return false
}

// KeepBuffers makes the packets Next returns stay valid after later calls:
// when the reader needs more input, instead of moving the unread bytes to
// the front of its buffer, over the packets it returned, it moves them
// into swap(old) and reads on into that. The caller owns old from then on
// (every packet returned from it lives there) and hands it back through a
// later swap result once it no longer needs those packets. swap returns a
// buffer at least as long as old, or the reader allocates one; it may
// return old itself when nothing in it is still needed.
//
// A reader goroutine hands whole buffers of packets to the decoders this
// way instead of copying every packet out of the reused buffer: a copy of
// each packet cost a quarter of the reader's time (stream.Parallel, 1 KiB
// packets).
func (r *Reader) KeepBuffers(swap func(old []byte) []byte) { r.swap = swap }

// DataOffset returns the file offset of the first byte of data, a slice
// the last call to Next returned: with it a packet can be read again later
// (os.File.ReadAt) without keeping it. For stdin it is the offset in the
// stream.
func (r *Reader) DataOffset(data []byte) int64 {
	if len(r.buf) == 0 {
		return -1
	}
	// data is a slice of r.buf (Next limits its capacity, so the distance
	// is taken from the pointers).
	d := uintptr(unsafe.Pointer(unsafe.SliceData(data))) - uintptr(unsafe.Pointer(unsafe.SliceData(r.buf)))
	if d > uintptr(len(r.buf)) {
		return -1
	}
	return r.base + int64(d)
}

// Close releases the buffer and the file opened by Open (never a reader
// passed to NewReader, nor standard input). Slices returned by Next must not
// be used after Close.
func (r *Reader) Close() error {
	var err error
	r.stopAhead()
	if r.decClose != nil {
		r.decClose()
		r.decClose = nil
	}
	if r.closer != nil {
		err = r.closer.Close()
		r.closer = nil
	}
	r.buf, r.pos, r.end = nil, 0, 0
	if r.err == nil {
		r.err = errClosed
	}
	return err
}

var errClosed = errors.New("capture: reader is closed")

// errShort is returned by fill when the input ends before n bytes.
var errShort = errors.New("short input")

// fill makes at least n bytes available at buf[pos:]. It returns errShort if
// the input ends first (whatever was read stays available), or a read error.
// It may move the unread bytes to the front of the buffer (or, with
// KeepBuffers, to a new one), so slices of the buffer taken before the
// call are invalid after it.
func (r *Reader) fill(n int) error {
	if r.end-r.pos >= n {
		return nil
	}
	if r.eof {
		return errShort
	}
	if r.readErr != nil {
		return r.readErr
	}
	if r.ra != nil {
		return r.fillAhead(n)
	}
	if r.pos > 0 {
		dst := r.buf
		if r.swap != nil {
			if dst = r.swap(r.buf); len(dst) < len(r.buf) {
				dst = make([]byte, len(r.buf))
			}
		}
		copy(dst, r.buf[r.pos:r.end])
		r.buf = dst
		r.base += int64(r.pos)
		r.end -= r.pos
		r.pos = 0
	}
	zero := 0
	for r.end < n {
		if r.end == len(r.buf) {
			// Grow only when the data is really there, so a bogus huge
			// length costs no more memory than the input holds.
			nb := make([]byte, min(max(2*len(r.buf), minBufSize), maxRecordSize+64))
			copy(nb, r.buf[:r.end])
			r.buf = nb
		}
		m, err := r.src.Read(r.buf[r.end:])
		r.end += m
		if err != nil {
			if err == io.EOF {
				r.eof = true
				if r.end < n {
					return errShort
				}
				return nil
			}
			r.readErr = fmt.Errorf("reading capture %s: %w", quoteName(r.name), err)
			return r.readErr
		}
		if m == 0 {
			if zero++; zero > 100 {
				r.readErr = fmt.Errorf("reading capture %s: %w", quoteName(r.name), io.ErrNoProgress)
				return r.readErr
			}
		}
	}
	return nil
}

// fail records and returns a FormatError for the record at buf[pos].
func (r *Reader) fail(truncated bool, format string, args ...any) ([]byte, error) {
	r.err = &FormatError{
		File:        r.name,
		Packet:      r.num + 1,
		Offset:      r.base + int64(r.pos),
		Reason:      fmt.Sprintf(format, args...),
		Truncated:   truncated,
		Compression: r.compression,
	}
	return nil, r.err
}

// failFill turns a fill error into the error Next returns: a truncation
// FormatError for errShort, the read error otherwise.
func (r *Reader) failFill(err error, what string, need int) ([]byte, error) {
	if err == errShort {
		return r.fail(true, "%s needs %d bytes, only %d remain", what, need, r.end-r.pos)
	}
	if de := (*DecompressError)(nil); errors.As(err, &de) {
		// Damaged compressed data: a corrupt capture from that packet on.
		return r.fail(false, "%v", de)
	}
	r.err = err
	return nil, err
}

// setEOF records a clean end of input.
func (r *Reader) setEOF() ([]byte, error) {
	r.err = io.EOF
	return nil, io.EOF
}

// atEOF reports whether the input ends exactly at buf[pos] (only valid after
// a fill that returned errShort).
func (r *Reader) atEOF() bool { return r.eof && r.pos == r.end }

func (r *Reader) u16(b []byte) uint16 {
	if r.bigEndian {
		return binary.BigEndian.Uint16(b)
	}
	return binary.LittleEndian.Uint16(b)
}

func (r *Reader) u32(b []byte) uint32 {
	if r.bigEndian {
		return binary.BigEndian.Uint32(b)
	}
	return binary.LittleEndian.Uint32(b)
}

func (r *Reader) u64(b []byte) uint64 {
	if r.bigEndian {
		return binary.BigEndian.Uint64(b)
	}
	return binary.LittleEndian.Uint64(b)
}
