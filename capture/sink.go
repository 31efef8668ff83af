package capture

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/gopacket/gopacket/layers"
)

// SinkOptions say where and how a Sink writes, as dumpcap's -w and -b
// options do.
type SinkOptions struct {
	// Path is the file to write (pcapng). "-" writes a classic pcap stream
	// (nanosecond timestamps) to Stdout instead, which cannot rotate.
	Path string
	// Stdout receives the stream for Path "-"; nil is os.Stdout.
	Stdout io.Writer

	// LinkType and Snaplen go in the file headers; Snaplen <= 0 is
	// DefaultSnaplen. Packets are cut to Snaplen.
	LinkType layers.LinkType
	Snaplen  int
	// Interface is written as the pcapng if_name, Filter as if_filter;
	// empty leaves them out.
	Interface string
	Filter    string

	// FileSizeKB (-b filesize:KB) starts a new file before a packet that
	// would take the current one over FileSizeKB*1000 bytes, counting the
	// statistics block that ends it. 0 is off.
	FileSizeKB int64
	// Duration (-b duration:S) starts a new file before the first packet
	// that arrives once the current file is Duration old, by Now. 0 is off.
	// Unlike dumpcap, no empty file is started while no packet arrives.
	Duration time.Duration
	// Files (-b files:N) keeps only the last Files files, deleting older
	// ones; 0 keeps all. It needs FileSizeKB or Duration.
	Files int

	// StopFileSizeKB (-a filesize:KB without -b) ends the capture before
	// a packet that would take the file over StopFileSizeKB*1000 bytes:
	// WritePacket returns ErrAutostop. 0 is off.
	StopFileSizeKB int64
	// Overwrite lets the sink replace an existing file (capture --force);
	// without it an existing file stops it before anything is written. The
	// ring only ever deletes files this run created, while they are still
	// the files it wrote: a file that was there before stays, even once
	// Overwrite replaced it, and does not count among the Files.
	Overwrite bool
	// StopFiles (-a files:N) ends the capture before a packet that would
	// start file N+1: WritePacket returns ErrAutostop. 0 is off; it needs
	// FileSizeKB or Duration.
	StopFiles int

	// Now is the clock for file names and Duration; nil is time.Now.
	Now func() time.Time

	// For tests: wrapOut wraps the file (or Stdout) writes; bufSize
	// replaces the 1 MiB buffer size.
	wrapOut func(io.Writer) io.Writer
	bufSize int
}

// Sink writes captured packets to a pcapng file (or a pcap stream on
// standard output), rotating files as SinkOptions say.
//
// Without rotation the file is exactly Path. With FileSizeKB or Duration,
// files are named as dumpcap names them: for Path "dir/cap.pcapng",
// "dir/cap_00001_20261123154501.pcapng", "dir/cap_00002_...", that is the
// name without its extension, a 5-digit sequence number (counting modulo
// 100000, from 1), the local time the file was started (YYYYMMDDhhmmss) and
// the extension, if Path has one.
//
// Every file is complete on its own: Section Header, Interface Description
// (if_name, if_filter, nanosecond timestamps), the packets, and an
// Interface Statistics Block at its end whose isb_starttime and isb_endtime
// are when the file was started and finished (for the first file, if
// Close ends it, isb_starttime is the capture start given to Close) and
// whose isb_ifrecv is the number of packets in that file. The
// drop counters, isb_osdrop (LiveStats.KernelDrops) and isb_ifdrop
// (LiveStats.IfDrops, when known), are only in the last file, and count the
// whole capture. A packet is never split across files: a new file is
// started before the packet that would not fit, and a packet too big for
// any file goes alone in one.
//
// Writes go through a 1 MiB buffer that holds only whole blocks. When a
// write fails (disk full, I/O error), the file is cut back to the end of
// its last whole block, so it stays readable with every packet written
// before the failed write, and WritePacket returns a *WriteError; it and
// every later call return that same error. Call Flush periodically so that
// readers of the file or pipe see packets promptly.
//
// WritePacket allocates nothing in steady state. A Sink is safe for
// concurrent use (Flush may be called from a timer goroutine).
type Sink struct {
	mu sync.Mutex

	path      string
	stdout    io.Writer
	linkTyp   layers.LinkType
	snaplen   int
	iface     string
	filter    string
	limit     int64 // bytes, 0: no size rotation
	dur       time.Duration
	keep      int
	rotate    bool
	stopAt    int64 // -a filesize, in bytes; 0: off
	overwrite bool  // may replace an existing file (SinkOptions.Overwrite)
	maxSeq    int   // -a files; 0: off
	now       func() time.Time
	wrapOut   func(io.Writer) io.Writer

	// The current file.
	name        string   // "" for standard output
	f           *os.File // nil for standard output, or after a failure
	out         io.Writer
	buf         sinkBuffer // whole blocks not yet written to out
	flushed     int64      // bytes written to out
	diskPackets uint64     // packets in the flushed bytes
	filePackets uint64     // packets in the file, buffered ones included
	opened      time.Time  // when the file was started, by now
	ng          *PcapngWriter
	pc          *PcapWriter

	seq     int
	files   []sinkOutFile
	written uint64
	// accepted and delivered count, without the lock, the packets
	// WritePacket took and those whose bytes the output took (Progress):
	// a stalled output blocks a write while holding mu.
	accepted, delivered atomic.Uint64
	err                 error // sticky: a write failed, or the sink is closed
	closed              bool
}

// sinkBuffer is the Sink's write buffer: writers append whole blocks to it.
type sinkBuffer struct{ b []byte }

func (s *sinkBuffer) Write(p []byte) (int, error) {
	s.b = append(s.b, p...)
	return len(p), nil
}

const sinkBufSize = 1 << 20

// maxISBLen is the largest statistics block a Sink writes (all five
// options). FileSizeKB budgets for it, so a finished file stays within the
// limit.
const maxISBLen = 24 + 5*12 + 4

// errSinkClosed is returned by calls after Close.
var errSinkClosed = errors.New("capture sink is closed")

// ErrAutostop is WritePacket's answer to the packet that would pass an
// autostop condition (StopFileSizeKB, StopFiles): it is not written, and
// the capture ends as if stopped, with everything before it kept.
var ErrAutostop = errors.New("capture autostop condition reached")

// NewSink checks opts and creates the first file (or writes the pcap header
// to Stdout).
func NewSink(opts SinkOptions) (*Sink, error) {
	rotate := opts.FileSizeKB != 0 || opts.Duration != 0
	switch {
	case opts.Path == "":
		return nil, errors.New("no capture file given: name one with -w (\"-\" writes a pcap stream to standard output)")
	case opts.FileSizeKB < 0:
		return nil, fmt.Errorf("-b filesize:%d: the size must be positive (in kB of 1000 bytes)", opts.FileSizeKB)
	case opts.FileSizeKB > 2<<40/1000:
		return nil, fmt.Errorf("-b filesize:%d: the size must be at most 2 TiB (%d kB), as in dumpcap", opts.FileSizeKB, 2<<40/1000)
	case opts.Duration < 0:
		return nil, fmt.Errorf("-b duration:%v: the duration must be positive", opts.Duration.Seconds())
	case opts.Files < 0:
		return nil, fmt.Errorf("-b files:%d: the number of files must be positive", opts.Files)
	case opts.Path == "-" && (rotate || opts.Files != 0):
		return nil, errors.New("cannot rotate files while writing to standard output (-w -): drop the -b options, or write to a file with -w FILE")
	case opts.StopFileSizeKB < 0 || opts.StopFiles < 0:
		return nil, errors.New("-a filesize and -a files take a positive number")
	case opts.Path == "-" && (opts.StopFileSizeKB != 0 || opts.StopFiles != 0):
		return nil, errors.New("-a filesize and -a files need a file: give -w FILE, not -w -")
	case opts.StopFiles != 0 && !rotate:
		return nil, fmt.Errorf("-a files:%d stops after %d files, so it needs files to rotate: add -b filesize:KB or -b duration:S", opts.StopFiles, opts.StopFiles)
	case opts.Files != 0 && !rotate:
		return nil, fmt.Errorf("ring buffer needs filesize or duration: -b files:%d keeps the last %d files, so also say when to start a new one with -b filesize:KB or -b duration:S", opts.Files, opts.Files)
	}
	if opts.Snaplen <= 0 {
		opts.Snaplen = DefaultSnaplen
	}
	if opts.Snaplen > maxRecordSize {
		return nil, fmt.Errorf("snapshot length %d is over the %d-byte limit of capture files", opts.Snaplen, maxRecordSize)
	}
	s := &Sink{
		path:      opts.Path,
		stdout:    opts.Stdout,
		linkTyp:   opts.LinkType,
		snaplen:   opts.Snaplen,
		iface:     opts.Interface,
		filter:    opts.Filter,
		limit:     opts.FileSizeKB * 1000,
		dur:       opts.Duration,
		keep:      opts.Files,
		rotate:    rotate,
		stopAt:    opts.StopFileSizeKB * 1000,
		overwrite: opts.Overwrite,
		maxSeq:    opts.StopFiles,
		now:       opts.Now,
		wrapOut:   opts.wrapOut,
	}
	if s.now == nil {
		s.now = time.Now
	}
	size := sinkBufSize
	if opts.bufSize > 0 {
		size = opts.bufSize
	}
	s.buf.b = make([]byte, 0, size)
	if s.path == "-" {
		if s.stdout == nil {
			s.stdout = os.Stdout
		}
		s.out = s.stdout
		if s.wrapOut != nil {
			s.out = s.wrapOut(s.out)
		}
		pc, err := NewPcapWriter(&s.buf, s.linkTyp, s.snaplen, true)
		if err != nil {
			return nil, err
		}
		s.pc = pc
		return s, nil
	}
	if err := s.openFile(s.now()); err != nil {
		return nil, err
	}
	return s, nil
}

// openFile starts the next file: it makes room in the ring, buffers the
// file's headers, then creates the file. The headers come first so that a
// header that cannot be made (a filter too long for pcapng) stops the sink
// before any file is created or, with Overwrite, truncated.
func (s *Sink) openFile(now time.Time) error {
	s.seq++
	name := s.path
	if s.rotate {
		name = ringName(s.path, s.seq, now)
	}
	if err := s.makeRoom(); err != nil {
		return err
	}
	s.buf.b = s.buf.b[:0]
	ng, err := NewPcapngWriter(&s.buf)
	if err == nil {
		_, err = ng.AddInterfaceWith(s.linkTyp, s.snaplen, InterfaceOptions{Name: s.iface, Filter: s.filter, Nanoseconds: true})
	}
	if err != nil {
		s.buf.b = s.buf.b[:0]
		return s.setErr(fmt.Errorf("cannot write the header of capture file %q: %w: the file was neither created nor changed; shorten the capture filter (-f) or the interface name (-i)", name, err))
	}
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o666)
	replaced := false
	if errors.Is(err, fs.ErrExist) && s.overwrite {
		// capture --force: the file that is there is replaced, but it
		// stays the user's, so the ring never deletes it.
		f, err = os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o666)
		replaced = true
	}
	if st, serr := os.Stat(name); errors.Is(err, fs.ErrExist) && serr == nil && st.IsDir() {
		_, err = os.OpenFile(name, os.O_WRONLY, 0) // EISDIR, said as such by createError
	}
	if errors.Is(err, fs.ErrExist) {
		return s.setErr(fmt.Errorf("%s exists; rocetap does not replace a file unless told to: choose another name, remove it, or add --force", name))
	}
	if err != nil {
		return s.setErr(createError(name, err))
	}
	s.name, s.f, s.out = name, f, io.Writer(f)
	if s.wrapOut != nil {
		s.out = s.wrapOut(f)
	}
	s.flushed, s.diskPackets, s.filePackets, s.opened = 0, 0, 0, now
	s.ng = ng
	rf := sinkOutFile{name: name}
	if st, err := f.Stat(); err == nil && !replaced {
		rf.id = st
	}
	s.files = append(s.files, rf)
	return nil
}

// sinkOutFile is a file the Sink wrote. id is the file's identity (as
// finished, once finished) when this run created it; nil when Overwrite
// replaced a file that was there before: the ring never deletes that one.
type sinkOutFile struct {
	name string
	id   fs.FileInfo
}

// makeRoom deletes the oldest files this run created until fewer than
// keep (-b files) remain. A file whose name no longer leads to the file
// this run wrote (the user moved it away, or put a file of theirs in its
// place) is not deleted, and no longer counts.
func (s *Sink) makeRoom() error {
	for s.keep > 0 {
		own, i := 0, -1
		for j, f := range s.files {
			if f.id != nil {
				own++
				if i < 0 {
					i = j
				}
			}
		}
		if own < s.keep {
			return nil
		}
		old := s.files[i]
		st, err := os.Lstat(old.name)
		// Same inode, size and time: a file the user put in its place
		// may reuse the inode number.
		if err == nil && os.SameFile(st, old.id) && st.Size() == old.id.Size() && st.ModTime().Equal(old.id.ModTime()) {
			err = os.Remove(old.name)
		}
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return s.setErr(fmt.Errorf("cannot delete the old ring buffer file %q (%w): capture stopped so as to keep at most %d files (-b files:%d); check the directory's permissions", old.name, err, s.keep, s.keep))
		}
		s.files = slices.Delete(s.files, i, i+1)
	}
	return nil
}

// ringName is dumpcap's name for file seq of a ring: prefix_NNNNN_time.ext.
func ringName(path string, seq int, t time.Time) string {
	dir, base := filepath.Split(path)
	ext := filepath.Ext(base)
	return fmt.Sprintf("%s%s_%05d_%s%s", dir, strings.TrimSuffix(base, ext), seq%100000,
		t.In(time.Local).Format("20060102150405"), ext)
}

// createError explains why a capture file cannot be created.
func createError(name string, err error) error {
	dir := filepath.Dir(name)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("cannot create capture file %q: directory %q does not exist (create it, or write elsewhere with -w): %w", name, dir, err)
	case errors.Is(err, syscall.EISDIR):
		return fmt.Errorf("cannot write capture file %q: it is a directory (name a file in it with -w, e.g. %s): %w", name, filepath.Join(name, "capture.pcapng"), err)
	case errors.Is(err, syscall.ENOTDIR):
		return fmt.Errorf("cannot create capture file %q: a part of its directory path is not a directory (check the path given to -w): %w", name, err)
	case errors.Is(err, syscall.EROFS):
		return fmt.Errorf("cannot create capture file %q: the file system is read-only (write elsewhere with -w): %w", name, err)
	case errors.Is(err, fs.ErrPermission):
		return fmt.Errorf("cannot create capture file %q: permission denied (write to a directory you can write to with -w, or check the permissions of %q with ls -ld): %w", name, dir, err)
	case errors.Is(err, syscall.ENOSPC), errors.Is(err, syscall.EDQUOT):
		return fmt.Errorf("cannot create capture file %q: no space left (free space, or write elsewhere with -w): %w", name, err)
	}
	return fmt.Errorf("cannot create capture file %q (write elsewhere with -w): %w", name, err)
}

// setErr makes err the sticky error and returns it.
func (s *Sink) setErr(err error) error {
	s.err = err
	return err
}

// WritePacket writes one packet, cut to the snapshot length, as
// PcapngWriter.WritePacket does (info.InterfaceIndex is ignored). It first
// starts a new file when a rotation option says so. A packet the writer
// refuses (a timestamp before 1970, a Length shorter than the data) writes
// nothing: WritePacket returns the error and the sink goes on. A failed
// write returns a *WriteError, and so does every later call.
func (s *Sink) WritePacket(info PacketInfo, data []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return s.err
	}
	n := min(len(data), s.snaplen)
	blen := pcapRecordHeaderLen + n
	if s.ng != nil {
		blen = 32 + (n+3)&^3
	}
	if s.stopAt > 0 && !s.rotate && s.filePackets > 0 && s.flushed+int64(len(s.buf.b)+blen+maxISBLen) > s.stopAt {
		return ErrAutostop
	}
	if s.rotate && s.filePackets > 0 {
		var now time.Time
		full := s.limit > 0 && s.flushed+int64(len(s.buf.b)+blen+maxISBLen) > s.limit
		if !full && s.dur > 0 {
			now = s.now()
			full = now.Sub(s.opened) >= s.dur
		}
		if full && s.maxSeq > 0 && s.seq >= s.maxSeq {
			return ErrAutostop
		}
		if full {
			if now.IsZero() {
				now = s.now()
			}
			if err := s.finishFile(now, s.fileStats(now, time.Time{}, nil)); err != nil {
				return err
			}
			if err := s.openFile(now); err != nil {
				return err
			}
		}
	}
	if len(s.buf.b) > 0 && len(s.buf.b)+blen > cap(s.buf.b) {
		if err := s.flush(); err != nil {
			return err
		}
	}
	mark := len(s.buf.b)
	var err error
	if s.ng != nil {
		info.InterfaceIndex = 0
		err = s.ng.WritePacket(info, data)
	} else {
		err = s.pc.WritePacket(info, data)
	}
	if err != nil {
		s.buf.b = s.buf.b[:mark]
		return err
	}
	s.filePackets++
	s.written++
	s.accepted.Add(1)
	return nil
}

// Progress returns the packets WritePacket accepted and those the output
// has taken (the rest wait in the buffer, or in a write the output does
// not finish). Unlike the other methods it never waits for a write, so a
// signal handler can report a stalled output.
func (s *Sink) Progress() (accepted, delivered uint64) {
	return s.accepted.Load(), s.delivered.Load()
}

// fileStats are the statistics of the current file at now; st is nil
// except for the last file.
func (s *Sink) fileStats(now, start time.Time, st *LiveStats) InterfaceStats {
	is := InterfaceStats{
		Timestamp:   now,
		Start:       s.opened,
		End:         now,
		Received:    s.filePackets,
		HasReceived: true,
	}
	if s.seq == 1 && !start.IsZero() {
		is.Start = start
	}
	if st != nil {
		is.OSDrops, is.HasOSDrops = st.KernelDrops, true
		is.IfDrops, is.HasIfDrops = st.IfDrops, st.HasIfDrops
	}
	return is
}

// finishFile ends the current file with a statistics block and closes it.
func (s *Sink) finishFile(now time.Time, st InterfaceStats) error {
	if len(s.buf.b)+maxISBLen > cap(s.buf.b) {
		if err := s.flush(); err != nil {
			return err
		}
	}
	mark := len(s.buf.b)
	if err := s.ng.WriteInterfaceStats(0, st); err != nil {
		// Only a clock before 1970 gets here: end the file without it.
		s.buf.b = s.buf.b[:mark]
	}
	if err := s.flush(); err != nil {
		return err
	}
	f := s.f
	s.f, s.out = nil, nil
	if last := &s.files[len(s.files)-1]; last.id != nil {
		last.id, _ = f.Stat() // as finished: makeRoom compares it
	}
	if err := f.Close(); err != nil {
		return s.setErr(&WriteError{File: s.name, Packets: s.diskPackets, Err: err, Closing: true})
	}
	return nil
}

// Flush writes the buffered packets to the file or stream.
func (s *Sink) Flush() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err == errSinkClosed {
		return nil
	}
	if s.err != nil {
		return s.err
	}
	return s.flush()
}

func (s *Sink) flush() error {
	if len(s.buf.b) == 0 {
		return nil
	}
	n, err := s.out.Write(s.buf.b)
	if err == nil && n < len(s.buf.b) {
		err = io.ErrShortWrite
	}
	if err != nil {
		return s.failWrite(err, n)
	}
	s.flushed += int64(n)
	s.delivered.Add(s.filePackets - s.diskPackets)
	s.diskPackets = s.filePackets
	s.buf.b = s.buf.b[:0]
	return nil
}

// failWrite handles a write that stored only n bytes of the buffer: it cuts
// the file back to the last whole block and makes the error sticky.
func (s *Sink) failWrite(err error, n int) error {
	we := &WriteError{File: s.name, Packets: s.diskPackets, Err: err}
	if s.f == nil { // standard output: whatever went out stays out
		off := 0
		if s.flushed == 0 {
			off = pcapFileHeaderLen // the buffer starts with the file header
		}
		we.Packets += countRecords(s.buf.b[:n], off)
		return s.setErr(we)
	}
	end := 0
	for end+12 <= n {
		l := int(binary.LittleEndian.Uint32(s.buf.b[end+4:]))
		if l < ngMinBlock || end+l > n {
			break
		}
		if binary.LittleEndian.Uint32(s.buf.b[end:]) == ngBlockEPB {
			we.Packets++
		}
		end += l
	}
	if err := s.f.Truncate(s.flushed + int64(end)); err != nil {
		we.TruncateErr = err
	}
	s.f.Close()
	s.f, s.out = nil, nil
	return s.setErr(we)
}

// countRecords counts the whole pcap records in b from offset off.
func countRecords(b []byte, off int) uint64 {
	var k uint64
	for off+pcapRecordHeaderLen <= len(b) {
		l := pcapRecordHeaderLen + int(binary.LittleEndian.Uint32(b[off+8:]))
		if off+l > len(b) {
			break
		}
		k++
		off += l
	}
	return k
}

// Close ends the capture: it writes a statistics block with st's drop
// counters to the current file (start, the capture's start, is the first
// file's isb_starttime; zero uses the time NewSink started it), flushes and
// closes the file (never Stdout). After a write failure it returns that
// failure, which later calls to WritePacket and Flush keep returning; a
// second Close does nothing. After a clean Close, WritePacket says the
// sink is closed.
func (s *Sink) Close(st LiveStats, start time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	if s.err != nil {
		return s.err
	}
	var err error
	if s.ng != nil {
		now := s.now()
		err = s.finishFile(now, s.fileStats(now, start, &st))
	} else {
		err = s.flush()
	}
	if s.err == nil {
		s.err = errSinkClosed
	}
	return err
}

// Files returns the files written and still present, oldest first (none
// for standard output); a ring file the user replaced during the capture
// is not among them.
func (s *Sink) Files() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	names := make([]string, len(s.files))
	for i, f := range s.files {
		names[i] = f.name
	}
	return names
}

// Written returns the number of packets WritePacket accepted.
func (s *Sink) Written() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.written
}

// WriteError reports a capture file (or standard output) that could not be
// written. The file was cut back to its last whole block: it holds Packets
// packets and reads without error.
type WriteError struct {
	File        string // "" for standard output
	Packets     uint64 // packets the file holds (or that went to standard output)
	Err         error  // the cause: errors.Is(err, syscall.ENOSPC) and the like work
	TruncateErr error  // non-nil if the file could not be cut back: it ends in part of a block
	Closing     bool   // the error came from closing the file
}

func (e *WriteError) Error() string {
	cause := e.Err
	var pe *fs.PathError
	if errors.As(cause, &pe) {
		cause = pe.Err // the path is in the message already
	}
	var b strings.Builder
	what := "writing"
	if e.Closing {
		what = "closing"
	}
	if e.File == "" {
		fmt.Fprintf(&b, "%s capture to standard output: %v: %d packets went out before the error", what, cause, e.Packets)
	} else {
		fmt.Fprintf(&b, "%s capture %q: %v: ", what, e.File, cause)
		switch {
		case e.TruncateErr != nil:
			fmt.Fprintf(&b, "the file holds the %d packets before the error and then part of a block, as it could not be cut back (%v); rocetap reads it up to there", e.Packets, e.TruncateErr)
		case e.Packets == 0:
			b.WriteString("the file holds no packets")
		default:
			fmt.Fprintf(&b, "the file holds the %d packets before the error", e.Packets)
		}
	}
	b.WriteString("; ")
	switch {
	case errors.Is(e.Err, syscall.ENOSPC), errors.Is(e.Err, syscall.EDQUOT):
		b.WriteString("free space or write elsewhere with -w (-b filesize:KB -b files:N keeps a ring of bounded size)")
	case errors.Is(e.Err, syscall.EFBIG):
		b.WriteString("the file reached the file system's size limit: start new files with -b filesize:KB")
	case errors.Is(e.Err, syscall.EIO):
		b.WriteString("the disk or file system failed (see dmesg): write elsewhere with -w")
	case errors.Is(e.Err, syscall.EPIPE):
		b.WriteString("the program reading the output stopped reading")
	default:
		b.WriteString("write elsewhere with -w")
	}
	return b.String()
}

func (e *WriteError) Unwrap() error { return e.Err }
