package capture

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gopacket/gopacket/layers"
	"github.com/rocetap/rocetap/internal/testcap"
)

// testClock is a clock the test moves.
type testClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *testClock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// clockStart is the time of the example file name in the Sink's
// documentation, 20261123154501.
var clockStart = time.Date(2026, 11, 23, 15, 45, 1, 0, time.Local)

// sinkFile is what a test reads back from one file a Sink wrote.
type sinkFile struct {
	name string
	size int64
	pkts []pkt
	isb  map[uint16][]byte // the options of its last block, an ISB
}

// readSinkFile reads a finished pcapng file with Open (it must end
// cleanly) and parses its blocks independently; the last must be an ISB.
func readSinkFile(t *testing.T, name string) sinkFile {
	t.Helper()
	r, err := Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	pkts, err := readAll(t, r)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	blocks := ngTestBlocks(t, b)
	last := blocks[len(blocks)-1]
	if last.typ != ngBlockISB {
		t.Fatalf("%s: last block has type %d, not an Interface Statistics Block", name, last.typ)
	}
	return sinkFile{name: name, size: int64(len(b)), pkts: pkts, isb: ngTestOptions(t, last.body[12:])}
}

// isbCounter returns a counter option of an ISB, or -1 if absent.
func isbCounter(t *testing.T, opts map[uint16][]byte, code uint16) int64 {
	t.Helper()
	v, ok := opts[code]
	if !ok {
		return -1
	}
	if len(v) != 8 {
		t.Fatalf("ISB option %d has %d bytes", code, len(v))
	}
	return int64(binary.LittleEndian.Uint64(v))
}

func isbTime(t *testing.T, opts map[uint16][]byte, code uint16) time.Time {
	t.Helper()
	v, ok := opts[code]
	if !ok || len(v) != 8 {
		t.Fatalf("ISB option %d: %x", code, v)
	}
	return time.Unix(0, int64(isbTicks(v)))
}

// epbLen is the size of the Enhanced Packet Block a Sink writes for data.
func epbLen(data []byte) int64 { return int64(32 + (len(data)+3)&^3) }

var ringNameRE = regexp.MustCompile(`^cap_(\d{5})_(\d{14})\.pcapng$`)

// checkSinkFiles reads back files in order and checks that together they
// hold exactly want, byte for byte with their times and lengths, that
// each file's statistics count its packets, and that the drop counters
// are in the last file only. It returns the files.
func checkSinkFiles(t *testing.T, names []string, want []pkt, st LiveStats) []sinkFile {
	t.Helper()
	var files []sinkFile
	var all []pkt
	for i, name := range names {
		f := readSinkFile(t, name)
		files = append(files, f)
		all = append(all, f.pkts...)
		if got := isbCounter(t, f.isb, ngOptISBIfRecv); got != int64(len(f.pkts)) {
			t.Errorf("%s: isb_ifrecv %d, but it holds %d packets", name, got, len(f.pkts))
		}
		osd, ifd := isbCounter(t, f.isb, ngOptISBOSDrop), isbCounter(t, f.isb, ngOptISBIfDrop)
		wantIf := int64(-1)
		if st.HasIfDrops {
			wantIf = int64(st.IfDrops)
		}
		if last := i == len(names)-1; last && (osd != int64(st.KernelDrops) || ifd != wantIf) {
			t.Errorf("%s (last): isb_osdrop %d isb_ifdrop %d, want %d %d", name, osd, ifd, st.KernelDrops, wantIf)
		} else if !last && (osd != -1 || ifd != -1) {
			t.Errorf("%s (not last): has drop counters %d %d", name, osd, ifd)
		}
	}
	checkPackets(t, all, want, true, layers.LinkTypeEthernet)
	return files
}

func writeAll(t *testing.T, s *Sink, pkts []pkt, clk *testClock, step time.Duration) []time.Time {
	t.Helper()
	var at []time.Time
	for i, p := range pkts {
		if clk != nil {
			clk.add(step)
			at = append(at, clk.Now())
		}
		if err := s.WritePacket(p.info, p.data); err != nil {
			t.Fatalf("packet %d: %v", i+1, err)
		}
	}
	return at
}

// onDisk lists the capture files in dir.
func onDisk(t *testing.T, dir string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, "*"))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestSinkSingleFile: without -b the file is exactly Path, and Close ends
// it with the capture's statistics.
func TestSinkSingleFile(t *testing.T) {
	for _, tc := range []struct {
		name  string
		n     int
		st    LiveStats
		start time.Time
	}{
		{"drops known", 200, LiveStats{Received: 200, KernelDrops: 12, IfDrops: 3, HasIfDrops: true}, clockStart.Add(-time.Second)},
		{"interface drops unknown", 10, LiveStats{Received: 10, KernelDrops: 0}, clockStart},
		{"no packets", 0, LiveStats{}, time.Time{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "cap.pcapng")
			clk := &testClock{t: clockStart}
			s, err := NewSink(SinkOptions{Path: path, LinkType: layers.LinkTypeEthernet, Interface: "eth0", Filter: "udp dst port 4791", Now: clk.Now})
			if err != nil {
				t.Fatal(err)
			}
			pkts := testPackets(5, tc.n)
			writeAll(t, s, pkts, clk, time.Millisecond)
			clk.add(time.Second)
			if err := s.Close(tc.st, tc.start); err != nil {
				t.Fatal(err)
			}
			if got := s.Files(); !slices.Equal(got, []string{path}) {
				t.Errorf("Files() = %q, want [%q]", got, path)
			}
			if got := onDisk(t, dir); !slices.Equal(got, []string{path}) {
				t.Errorf("directory holds %q", got)
			}
			if s.Written() != uint64(tc.n) {
				t.Errorf("Written() = %d, want %d", s.Written(), tc.n)
			}
			if all := ngISBLen(InterfaceStats{Start: clockStart, End: clockStart, HasReceived: true, HasIfDrops: true, HasOSDrops: true}); maxISBLen != all {
				t.Errorf("maxISBLen = %d, but the block with every option is %d bytes", maxISBLen, all)
			}
			f := checkSinkFiles(t, []string{path}, pkts, tc.st)[0]
			wantStart := tc.start
			if wantStart.IsZero() {
				wantStart = clockStart // when NewSink created the file
			}
			if got := isbTime(t, f.isb, ngOptISBStartTime); !got.Equal(wantStart) {
				t.Errorf("isb_starttime %v, want %v", got, wantStart)
			}
			if got := isbTime(t, f.isb, ngOptISBEndTime); !got.Equal(clk.Now()) {
				t.Errorf("isb_endtime %v, want %v", got, clk.Now())
			}
			// The interface is named and carries the filter.
			b, _ := os.ReadFile(path)
			idb := ngTestOptions(t, ngTestBlocks(t, b)[1].body[8:])
			if string(idb[ngOptIfName]) != "eth0" || string(idb[ngOptIfFilter]) != "\x00udp dst port 4791" || !bytes.Equal(idb[ngOptTSResol], []byte{9}) {
				t.Errorf("IDB options %q", idb)
			}
		})
	}
}

// TestSinkRotateBySize: files stay within the limit (but for a lone
// packet too big for any file), none is closed while the next packet
// would still have fit, they are named as dumpcap names them, and no
// packet is lost or duplicated across them.
func TestSinkRotateBySize(t *testing.T) {
	big := testPackets(9, 30)
	big[7].data = bytes.Repeat([]byte{0xab}, 5000)
	big[7].info.Length = 5000
	big[8].data = bytes.Repeat([]byte{0xcd}, 4000)
	big[8].info.Length = 4001
	for _, tc := range []struct {
		name   string
		kb     int64
		pkts   []pkt
		minOut int // at least this many files
	}{
		{"2 kB", 2, testPackets(6, 60), 10},
		{"10 kB", 10, testPackets(7, 200), 10},
		{"1 MB, one file", 1000, testPackets(8, 100), 1},
		{"packets bigger than the limit", 2, big, 10},
		{"1 kB, most packets alone", 1, testPackets(8, 40), 20},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			clk := &testClock{t: clockStart}
			s, err := NewSink(SinkOptions{Path: filepath.Join(dir, "cap.pcapng"), LinkType: layers.LinkTypeEthernet, FileSizeKB: tc.kb, Now: clk.Now})
			if err != nil {
				t.Fatal(err)
			}
			at := writeAll(t, s, tc.pkts, clk, time.Second)
			st := LiveStats{Received: uint64(len(tc.pkts)), KernelDrops: 4}
			if err := s.Close(st, time.Time{}); err != nil {
				t.Fatal(err)
			}
			names := s.Files()
			if len(names) < tc.minOut {
				t.Fatalf("%d files, want at least %d", len(names), tc.minOut)
			}
			if got := onDisk(t, dir); !slices.Equal(got, names) {
				t.Fatalf("directory holds %q, Files() = %q", got, names)
			}
			files := checkSinkFiles(t, names, tc.pkts, st)
			limit := tc.kb * 1000
			first := 0 // index of the first packet of file i
			for i, f := range files {
				if len(f.pkts) == 0 {
					t.Fatalf("%s holds no packet", f.name)
				}
				if f.size > limit && len(f.pkts) > 1 {
					t.Errorf("%s: %d bytes, over the %d-byte limit with %d packets", f.name, f.size, limit, len(f.pkts))
				}
				if i+1 < len(files) {
					isb := int64(ngISBLen(InterfaceStats{Start: clockStart, End: clockStart, HasReceived: true}))
					next := tc.pkts[first+len(f.pkts)].data
					if f.size-isb+epbLen(next)+int64(maxISBLen) <= limit {
						t.Errorf("%s closed at %d bytes, but the next %d-byte packet would have fit in %d", f.name, f.size, len(next), limit)
					}
				}
				m := ringNameRE.FindStringSubmatch(filepath.Base(f.name))
				if m == nil {
					t.Fatalf("file name %q is not cap_NNNNN_YYYYMMDDhhmmss.pcapng", f.name)
				}
				opened := clockStart
				if i > 0 {
					opened = at[first]
				}
				if m[1] != fmt.Sprintf("%05d", i+1) || m[2] != opened.Format("20060102150405") {
					t.Errorf("file %d is %q, want sequence %05d and time %s", i+1, f.name, i+1, opened.Format("20060102150405"))
				}
				first += len(f.pkts)
			}
			if filepath.Base(names[0]) != "cap_00001_20261123154501.pcapng" {
				t.Errorf("first file %q, want cap_00001_20261123154501.pcapng", names[0])
			}
			if s.Written() != uint64(len(tc.pkts)) {
				t.Errorf("Written() = %d, want %d", s.Written(), len(tc.pkts))
			}
		})
	}
}

// TestSinkRotateByDuration: a file is finished before the first packet
// that comes once it is Duration old, by the injected clock; its
// statistics span from its start to the rotation.
func TestSinkRotateByDuration(t *testing.T) {
	for _, tc := range []struct {
		name string
		dur  time.Duration
		step time.Duration // clock advance before each packet
		n    int
		kb   int64
		want []int // packets per file
	}{
		{"3s, a packet a second", 3 * time.Second, time.Second, 10, 0, []int{2, 3, 3, 2}},
		{"1s, a packet a second", time.Second, time.Second, 4, 0, []int{1, 1, 1, 1}},
		{"10s, a packet a second", 10 * time.Second, time.Second, 5, 0, []int{5}},
		{"quiet gap does not make empty files", 2 * time.Second, 5 * time.Second, 3, 0, []int{1, 1, 1}},
		{"duration and size", time.Hour, time.Second, 60, 2, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			clk := &testClock{t: clockStart}
			path := filepath.Join(dir, "cap.pcapng")
			s, err := NewSink(SinkOptions{Path: path, LinkType: layers.LinkTypeEthernet, Duration: tc.dur, FileSizeKB: tc.kb, Now: clk.Now})
			if err != nil {
				t.Fatal(err)
			}
			pkts := testPackets(10, tc.n)
			at := writeAll(t, s, pkts, clk, tc.step)
			clk.add(tc.step)
			closed := clk.Now()
			if err := s.Close(LiveStats{}, time.Time{}); err != nil {
				t.Fatal(err)
			}
			files := checkSinkFiles(t, s.Files(), pkts, LiveStats{})
			if tc.want != nil {
				var got []int
				for _, f := range files {
					got = append(got, len(f.pkts))
				}
				if !slices.Equal(got, tc.want) {
					t.Fatalf("packets per file %v, want %v", got, tc.want)
				}
			} else if len(files) < 5 {
				t.Fatalf("size limit ignored with a duration: %d files", len(files))
			}
			first := 0
			for i, f := range files {
				opened := clockStart
				if i > 0 {
					opened = at[first]
				}
				end := closed
				if i+1 < len(files) {
					end = at[first+len(f.pkts)]
				}
				if want := ringName(path, i+1, opened); f.name != want {
					t.Errorf("file %d is %q, want %q", i+1, f.name, want)
				}
				if s, e := isbTime(t, f.isb, ngOptISBStartTime), isbTime(t, f.isb, ngOptISBEndTime); !s.Equal(opened) || !e.Equal(end) {
					t.Errorf("%s: statistics span %v to %v, want %v to %v", f.name, s, e, opened, end)
				}
				first += len(f.pkts)
			}
		})
	}
}

// TestSinkRing: -b files:N keeps the last N files, deletes the older ones,
// and Files() says which are left; the packets they hold are the last ones
// written, in order.
func TestSinkRing(t *testing.T) {
	for _, tc := range []struct {
		name  string
		keep  int
		kb    int64
		dur   time.Duration
		n     int
		files int // files written in all (sequence number of the last)
	}{
		{"3 of many by size", 3, 2, 0, 80, 0},
		{"1 by size", 1, 2, 0, 40, 0},
		{"5 by duration", 5, 0, 2 * time.Second, 30, 16},
		{"more allowed than written", 10, 0, 2 * time.Second, 6, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			clk := &testClock{t: clockStart}
			s, err := NewSink(SinkOptions{Path: filepath.Join(dir, "cap.pcapng"), LinkType: layers.LinkTypeEthernet, FileSizeKB: tc.kb, Duration: tc.dur, Files: tc.keep, Now: clk.Now})
			if err != nil {
				t.Fatal(err)
			}
			pkts := testPackets(11, tc.n)
			writeAll(t, s, pkts, clk, time.Second)
			if err := s.Close(LiveStats{KernelDrops: 1}, time.Time{}); err != nil {
				t.Fatal(err)
			}
			names := s.Files()
			if got := onDisk(t, dir); !slices.Equal(got, names) {
				t.Fatalf("directory holds %q, Files() = %q", got, names)
			}
			m := ringNameRE.FindStringSubmatch(filepath.Base(names[len(names)-1]))
			if m == nil {
				t.Fatalf("last file %q is not a ring file name", names[len(names)-1])
			}
			total, _ := strconv.Atoi(m[1])
			if tc.files != 0 && total != tc.files {
				t.Errorf("%d files written, want %d", total, tc.files)
			}
			if want := min(tc.keep, total); len(names) != want {
				t.Fatalf("%d files kept, want %d: %q", len(names), want, names)
			}
			for i, name := range names {
				if m := ringNameRE.FindStringSubmatch(filepath.Base(name)); m == nil || m[1] != fmt.Sprintf("%05d", total-len(names)+1+i) {
					t.Errorf("file %d of the ring is %q: want sequence %05d", i+1, name, total-len(names)+1+i)
				}
			}
			var kept int
			for _, name := range names {
				kept += len(readSinkFile(t, name).pkts)
			}
			checkSinkFiles(t, names, pkts[len(pkts)-kept:], LiveStats{KernelDrops: 1})
		})
	}
}

// TestSinkStdout: "-" writes a classic pcap stream that Flush pushes out
// and that NewReader reads.
func TestSinkStdout(t *testing.T) {
	var out bytes.Buffer
	s, err := NewSink(SinkOptions{Path: "-", Stdout: &out, LinkType: layers.LinkTypeEthernet, Snaplen: 1000})
	if err != nil {
		t.Fatal(err)
	}
	pkts := testPackets(12, 30)
	writeAll(t, s, pkts[:20], nil, 0)
	if out.Len() != 0 {
		t.Errorf("%d bytes out before Flush: writes are not buffered", out.Len())
	}
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	got, err := readBytes(t, out.Bytes())
	if err != nil || len(got) != 20 {
		t.Fatalf("after Flush the stream holds %d packets (%v), want 20", len(got), err)
	}
	writeAll(t, s, pkts[20:], nil, 0)
	if err := s.Close(LiveStats{KernelDrops: 3}, time.Time{}); err != nil {
		t.Fatal(err)
	}
	r, err := NewReader(bytes.NewReader(out.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if r.Format() != "pcap-ns" {
		t.Errorf("format %q, want pcap-ns", r.Format())
	}
	got, err = readAll(t, r)
	if err != nil {
		t.Fatal(err)
	}
	// Packets are cut to the snapshot length.
	want := slices.Clone(pkts)
	for i := range want {
		if len(want[i].data) > 1000 {
			want[i].data = want[i].data[:1000]
		}
	}
	checkPackets(t, got, want, true, layers.LinkTypeEthernet)
	if len(s.Files()) != 0 || s.Written() != 30 {
		t.Errorf("Files() = %q, Written() = %d; want none, 30", s.Files(), s.Written())
	}
}

// TestSinkOptionErrors: options dumpcap refuses, and files that cannot be
// created, fail NewSink with a message that names the problem and what to
// do; nothing is left on disk.
func TestSinkOptionErrors(t *testing.T) {
	dir := t.TempDir()
	notDir := filepath.Join(dir, "file")
	if err := os.WriteFile(notDir, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		opts SinkOptions
		want []string // substrings of the message
		is   error
	}{
		{"no path", SinkOptions{}, []string{"-w"}, nil},
		{"stdout with filesize", SinkOptions{Path: "-", FileSizeKB: 10}, []string{"standard output", "-b"}, nil},
		{"stdout with duration", SinkOptions{Path: "-", Duration: time.Second}, []string{"standard output"}, nil},
		{"stdout with files", SinkOptions{Path: "-", Files: 2}, []string{"standard output"}, nil},
		{"files alone", SinkOptions{Path: filepath.Join(dir, "a.pcapng"), Files: 3}, []string{"ring buffer needs filesize or duration", "-b filesize:KB", "-b duration:S"}, nil},
		{"negative filesize", SinkOptions{Path: filepath.Join(dir, "a.pcapng"), FileSizeKB: -1}, []string{"filesize:-1"}, nil},
		{"negative duration", SinkOptions{Path: filepath.Join(dir, "a.pcapng"), Duration: -time.Second}, []string{"duration"}, nil},
		{"negative files", SinkOptions{Path: filepath.Join(dir, "a.pcapng"), FileSizeKB: 1, Files: -1}, []string{"files:-1"}, nil},
		{"huge filesize", SinkOptions{Path: filepath.Join(dir, "a.pcapng"), FileSizeKB: 1 << 50}, []string{"2 TiB"}, nil},
		{"directory missing", SinkOptions{Path: filepath.Join(dir, "nodir", "a.pcapng")},
			[]string{filepath.Join(dir, "nodir", "a.pcapng"), "does not exist", "-w"}, fs.ErrNotExist},
		{"directory missing, ring", SinkOptions{Path: filepath.Join(dir, "nodir", "a.pcapng"), FileSizeKB: 1},
			[]string{filepath.Join(dir, "nodir", "a_00001_"), "does not exist"}, fs.ErrNotExist},
		{"path is a directory", SinkOptions{Path: dir}, []string{dir, "is a directory", "-w"}, syscall.EISDIR},
		{"parent is a file", SinkOptions{Path: filepath.Join(notDir, "a.pcapng")}, []string{notDir, "not a directory", "-w"}, syscall.ENOTDIR},
		{"snaplen", SinkOptions{Path: filepath.Join(dir, "a.pcapng"), Snaplen: 1 << 30}, []string{"snapshot length"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := NewSink(tc.opts)
			if err == nil {
				s.Close(LiveStats{}, time.Time{})
				t.Fatal("no error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Errorf("error %q is not %v", err, tc.is)
			}
			if got := onDisk(t, dir); !slices.Equal(got, []string{notDir}) {
				t.Errorf("left on disk: %q", got)
			}
		})
	}
	t.Run("permission denied", func(t *testing.T) {
		if os.Geteuid() == 0 {
			t.Skip("running as root, which may write to any directory")
		}
		ro := filepath.Join(t.TempDir(), "ro")
		if err := os.Mkdir(ro, 0o555); err != nil {
			t.Fatal(err)
		}
		_, err := NewSink(SinkOptions{Path: filepath.Join(ro, "a.pcapng")})
		if err == nil || !errors.Is(err, fs.ErrPermission) || !strings.Contains(err.Error(), ro) || !strings.Contains(err.Error(), "-w") {
			t.Errorf("err = %v, want permission denied naming %s and -w", err, ro)
		}
	})
}

// failAfter passes the first n bytes to w, then fails as a full disk does.
type failAfter struct {
	w   io.Writer
	n   int
	err error
}

func (f *failAfter) Write(p []byte) (int, error) {
	if len(p) <= f.n {
		f.n -= len(p)
		return f.w.Write(p)
	}
	m, err := f.w.Write(p[:f.n])
	f.n -= m
	if err == nil {
		err = &fs.PathError{Op: "write", Path: "x", Err: f.err}
	}
	return m, err
}

// TestSinkWriteFailure: when a write fails part way, the file is cut back
// to its last whole packet, reads back with exactly the packets before the
// failure, and every later call returns the same error, which names the
// file and says what to do.
func TestSinkWriteFailure(t *testing.T) {
	pkts := testPackets(13, 100)
	// Block boundaries of the file the sink would write, from a run that
	// does not fail.
	dir := t.TempDir()
	ref := filepath.Join(dir, "ref.pcapng")
	s, err := NewSink(SinkOptions{Path: ref, LinkType: layers.LinkTypeEthernet})
	if err != nil {
		t.Fatal(err)
	}
	writeAll(t, s, pkts, nil, 0)
	if err := s.Close(LiveStats{}, time.Time{}); err != nil {
		t.Fatal(err)
	}
	refBytes, _ := os.ReadFile(ref)
	var ends []int // end offset of each packet's block
	off := 0
	for _, b := range ngTestBlocks(t, refBytes) {
		off += len(b.body) + 12
		if b.typ == ngBlockEPB {
			ends = append(ends, off)
		}
	}
	headers := ends[0] - int(epbLen(pkts[0].data))
	for _, tc := range []struct {
		name    string
		failAt  int // bytes stored before the failure
		bufSize int
		cause   error
	}{
		{"inside the section header", 10, 0, syscall.ENOSPC},
		{"right after the headers", headers, 0, syscall.ENOSPC},
		{"inside the first packet", headers + 20, 0, syscall.ENOSPC},
		{"at a block boundary", ends[41], 4096, syscall.ENOSPC},
		{"inside a packet, small buffer", ends[57] + 3, 4096, syscall.ENOSPC},
		{"inside a packet, I/O error", ends[57] + 3, 4096, syscall.EIO},
		{"quota", ends[80] - 1, 8192, syscall.EDQUOT},
		{"inside the statistics block", len(refBytes) - 8, 0, syscall.ENOSPC},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "cap.pcapng")
			fa := &failAfter{n: tc.failAt, err: tc.cause}
			s, err := NewSink(SinkOptions{Path: path, LinkType: layers.LinkTypeEthernet, bufSize: tc.bufSize,
				wrapOut: func(w io.Writer) io.Writer { fa.w = w; return fa }})
			if err != nil {
				t.Fatal(err)
			}
			var werr error
			for _, p := range pkts {
				if werr = s.WritePacket(p.info, p.data); werr != nil {
					break
				}
			}
			if werr == nil {
				werr = s.Flush()
			}
			fromClose := werr == nil
			if fromClose {
				werr = s.Close(LiveStats{}, time.Time{})
			}
			var we *WriteError
			if !errors.As(werr, &we) || !errors.Is(werr, tc.cause) {
				t.Fatalf("error %v: want a *WriteError for %v", werr, tc.cause)
			}
			want := 0 // packets wholly in the stored bytes
			for want < len(ends) && ends[want] <= tc.failAt {
				want++
			}
			if we.Packets != uint64(want) {
				t.Errorf("error says the file holds %d packets, want %d", we.Packets, want)
			}
			msg := werr.Error()
			holds := fmt.Sprintf("the file holds the %d packets before the error", want)
			if want == 0 {
				holds = "the file holds no packets"
			}
			for _, w := range []string{strconv.Quote(path), tc.cause.Error(), holds, "-w"} {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q does not say %q", msg, w)
				}
			}
			if strings.Contains(msg, `"x"`) || strings.Count(msg, path) != 1 {
				t.Errorf("error %q repeats the path or names the wrapped one", msg)
			}
			// Sticky.
			if err := s.WritePacket(pkts[0].info, pkts[0].data); err != werr {
				t.Errorf("next WritePacket: %v, want the same error", err)
			}
			if err := s.Flush(); err != werr {
				t.Errorf("Flush: %v, want the same error", err)
			}
			if err := s.Close(LiveStats{}, time.Time{}); !fromClose && err != werr {
				t.Errorf("Close: %v, want the same error", err)
			}
			// The file is whole up to its last packet.
			info, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			if want > 0 && info.Size() != int64(ends[want-1]) || want == 0 && info.Size() > int64(headers) {
				t.Errorf("file cut back to %d bytes, want the end of packet %d's block", info.Size(), want)
			}
			r, err := Open(path)
			if info.Size() == 0 {
				if !errors.Is(err, ErrEmpty) {
					t.Fatalf("empty file: Open: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			got, err := readAll(t, r)
			if err != nil {
				t.Fatalf("cut-back file: %v", err)
			}
			checkPackets(t, got, pkts[:want], true, layers.LinkTypeEthernet)
		})
	}
}

// TestSinkWriteFailureRotated: a failure in a later file leaves the
// earlier ones whole and cuts the current one back.
func TestSinkWriteFailureRotated(t *testing.T) {
	dir := t.TempDir()
	var fa *failAfter
	opened := 0
	s, err := NewSink(SinkOptions{Path: filepath.Join(dir, "cap.pcapng"), LinkType: layers.LinkTypeEthernet, FileSizeKB: 4, bufSize: 1024,
		wrapOut: func(w io.Writer) io.Writer {
			opened++
			if opened < 3 {
				return w
			}
			fa = &failAfter{w: w, n: 2500, err: syscall.ENOSPC}
			return fa
		}})
	if err != nil {
		t.Fatal(err)
	}
	pkts := testPackets(14, 200)
	n := 0
	for ; n < len(pkts); n++ {
		if err = s.WritePacket(pkts[n].info, pkts[n].data); err != nil {
			break
		}
	}
	var we *WriteError
	if !errors.As(err, &we) || !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("err = %v, want a disk-full WriteError", err)
	}
	names := s.Files()
	if len(names) != 3 || we.File != names[2] {
		t.Fatalf("Files() = %q, error for %q: want the failure in the third file", names, we.File)
	}
	var got []pkt
	for i, name := range names {
		r, err := Open(name)
		if err != nil {
			t.Fatal(err)
		}
		p, err := readAll(t, r)
		r.Close()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if i == 2 && len(p) != int(we.Packets) {
			t.Errorf("%s holds %d packets, the error says %d", name, len(p), we.Packets)
		}
		got = append(got, p...)
	}
	checkPackets(t, got, pkts[:len(got)], true, layers.LinkTypeEthernet)
	if len(got) >= n {
		t.Errorf("%d packets in the files, but the failure came at packet %d", len(got), n+1)
	}
	if err := s.Close(LiveStats{}, time.Time{}); !errors.Is(err, syscall.ENOSPC) {
		t.Errorf("Close: %v", err)
	}
}

// TestSinkStdoutFailure: a stream cannot be cut back, but the error says
// how many packets went out whole.
func TestSinkStdoutFailure(t *testing.T) {
	var out bytes.Buffer
	fa := &failAfter{w: &out, n: 5000, err: syscall.EPIPE}
	s, err := NewSink(SinkOptions{Path: "-", Stdout: fa, LinkType: layers.LinkTypeEthernet, bufSize: 2048})
	if err != nil {
		t.Fatal(err)
	}
	pkts := testPackets(15, 50)
	for _, p := range pkts {
		if err = s.WritePacket(p.info, p.data); err != nil {
			break
		}
	}
	var we *WriteError
	if !errors.As(err, &we) || !errors.Is(err, syscall.EPIPE) || !strings.Contains(err.Error(), "standard output") {
		t.Fatalf("err = %v, want a broken-pipe WriteError about standard output", err)
	}
	got, rerr := readBytes(t, out.Bytes())
	if !errors.Is(rerr, io.ErrUnexpectedEOF) {
		t.Errorf("reading the stream: %v, want a cut-short record", rerr)
	}
	if uint64(len(got)) != we.Packets || !strings.Contains(err.Error(), fmt.Sprintf("%d packets went out", len(got))) {
		t.Errorf("stream holds %d whole packets, error: %v", len(got), err)
	}
	checkPackets(t, got, pkts[:len(got)], true, layers.LinkTypeEthernet)
}

// TestSinkPacketErrors: a packet the writer refuses writes nothing and the
// sink goes on; after Close every call says it is closed.
func TestSinkPacketErrors(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cap.pcapng")
	s, err := NewSink(SinkOptions{Path: path, LinkType: layers.LinkTypeEthernet})
	if err != nil {
		t.Fatal(err)
	}
	pkts := testPackets(17, 3)
	for _, bad := range []PacketInfo{
		{Timestamp: time.Unix(-10, 0)},
		{Timestamp: t0, Length: 5}, // shorter than the data
	} {
		if err := s.WritePacket(bad, pkts[0].data); err == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
	writeAll(t, s, pkts, nil, 0)
	if err := s.Close(LiveStats{}, time.Time{}); err != nil {
		t.Fatal(err)
	}
	checkSinkFiles(t, []string{path}, pkts, LiveStats{})
	if s.Written() != 3 {
		t.Errorf("Written() = %d, want 3", s.Written())
	}
	if err := s.WritePacket(pkts[0].info, pkts[0].data); !errors.Is(err, errSinkClosed) {
		t.Errorf("WritePacket after Close: %v", err)
	}
	if err := s.Close(LiveStats{}, time.Time{}); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if err := s.Flush(); err != nil {
		t.Errorf("Flush after Close: %v", err)
	}
}

// TestSinkConcurrentFlush: Flush from a timer goroutine while packets are
// written (run with -race).
func TestSinkConcurrentFlush(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cap.pcapng")
	clk := &testClock{t: clockStart}
	s, err := NewSink(SinkOptions{Path: path, LinkType: layers.LinkTypeEthernet, FileSizeKB: 50, Files: 4, Now: clk.Now, bufSize: 4096})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			select {
			case <-done:
				return
			default:
			}
			if err := s.Flush(); err != nil {
				t.Error(err)
				return
			}
			_, _ = s.Files(), s.Written()
		}
	})
	pkts := testPackets(18, 500)
	writeAll(t, s, pkts, clk, time.Millisecond)
	close(done)
	wg.Wait()
	if err := s.Close(LiveStats{}, time.Time{}); err != nil {
		t.Fatal(err)
	}
	var kept int
	for _, name := range s.Files() {
		kept += len(readSinkFile(t, name).pkts)
	}
	checkSinkFiles(t, s.Files(), pkts[len(pkts)-kept:], LiveStats{})
}

// TestSinkRotatedFilesTshark: tshark reads every rotated file whole.
func TestSinkRotatedFilesTshark(t *testing.T) {
	tshark := testcap.Tshark(t)
	dir := t.TempDir()
	s, err := NewSink(SinkOptions{Path: filepath.Join(dir, "cap.pcapng"), LinkType: layers.LinkTypeEthernet, Interface: "eth0", FileSizeKB: 20})
	if err != nil {
		t.Fatal(err)
	}
	pkts := testPackets(19, 100)
	writeAll(t, s, pkts, nil, 0)
	if err := s.Close(LiveStats{KernelDrops: 2}, time.Time{}); err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, name := range s.Files() {
		n := len(strings.Fields(runTool(t, tshark, "-r", name, "-T", "fields", "-e", "frame.number")))
		if want := len(readSinkFile(t, name).pkts); n != want {
			t.Errorf("tshark reads %d packets in %s, want %d", n, name, want)
		}
		total += n
	}
	if total != len(pkts) {
		t.Errorf("tshark reads %d packets in all, want %d", total, len(pkts))
	}
}

// TestSinkWritePacketNoAllocs: in steady state a packet costs no
// allocation (b.Loop may add some, golang/go#73137, so this is a test).
func TestSinkWritePacketNoAllocs(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts SinkOptions
	}{
		{"file", SinkOptions{}},
		{"duration", SinkOptions{Duration: time.Hour}},
		{"stdout", SinkOptions{Path: "-", Stdout: io.Discard}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := tc.opts
			if opts.Path == "" {
				opts.Path = filepath.Join(t.TempDir(), "cap.pcapng")
			}
			s, err := NewSink(opts)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close(LiveStats{}, time.Time{})
			data := make([]byte, 1082)
			info := PacketInfo{Timestamp: t0}
			if a := testing.AllocsPerRun(5000, func() {
				if err := s.WritePacket(info, data); err != nil {
					t.Fatal(err)
				}
			}); a != 0 {
				t.Errorf("%v allocations per packet", a)
			}
		})
	}
}

// BenchmarkSinkWritePacket: "null" is the sink's own cost (writing to
// /dev/null); "ring" writes real files, rotated at 100 MB, two kept, so
// the disk it needs stays bounded.
func BenchmarkSinkWritePacket(b *testing.B) {
	for _, bc := range []struct {
		name string
		size int
		ring bool
	}{
		{"null/64", 64, false},
		{"null/1082", 1082, false},
		{"ring/64", 64, true},
		{"ring/1082", 1082, true},
	} {
		b.Run(bc.name, func(b *testing.B) {
			opts := SinkOptions{Path: os.DevNull, LinkType: layers.LinkTypeEthernet, Overwrite: true} // /dev/null exists: capture --force
			if bc.ring {
				opts = SinkOptions{Path: filepath.Join(b.TempDir(), "cap.pcapng"), LinkType: layers.LinkTypeEthernet, FileSizeKB: 100_000, Files: 2}
			}
			s, err := NewSink(opts)
			if err != nil {
				b.Fatal(err)
			}
			data := make([]byte, bc.size)
			info := PacketInfo{Timestamp: t0}
			b.SetBytes(int64(bc.size))
			b.ReportAllocs()
			for b.Loop() {
				if err := s.WritePacket(info, data); err != nil {
					b.Fatal(err)
				}
			}
			if err := s.Close(LiveStats{}, time.Time{}); err != nil {
				b.Fatal(err)
			}
		})
	}
}

// TestSinkAutostop: -a filesize:KB keeps the one file within KB kB and
// refuses the packet that would pass it (ErrAutostop); -a files:N refuses
// the packet that would start file N+1. What was written is complete.
func TestSinkAutostop(t *testing.T) {
	pkts := testPackets(40, 200)
	t.Run("filesize", func(t *testing.T) {
		dir := t.TempDir()
		path := filepath.Join(dir, "cap.pcapng")
		s, err := NewSink(SinkOptions{Path: path, LinkType: layers.LinkTypeEthernet, StopFileSizeKB: 2})
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, p := range pkts {
			if err := s.WritePacket(p.info, p.data); err != nil {
				if !errors.Is(err, ErrAutostop) {
					t.Fatal(err)
				}
				break
			}
			n++
		}
		if n == 0 || n == len(pkts) {
			t.Fatalf("%d of %d packets written before the stop", n, len(pkts))
		}
		if err := s.Close(LiveStats{Received: uint64(n)}, time.Time{}); err != nil {
			t.Fatal(err)
		}
		f := checkSinkFiles(t, []string{path}, pkts[:n], LiveStats{Received: uint64(n)})[0]
		if f.size > 2000 || f.size+epbLen(pkts[n].data) <= 2000-int64(maxISBLen) {
			t.Errorf("%d packets, %d bytes: want the file within 2000 bytes and the next packet not to fit", n, f.size)
		}
	})
	t.Run("files", func(t *testing.T) {
		dir := t.TempDir()
		clk := &testClock{t: clockStart}
		s, err := NewSink(SinkOptions{Path: filepath.Join(dir, "cap.pcapng"), LinkType: layers.LinkTypeEthernet, FileSizeKB: 2, StopFiles: 3, Now: clk.Now})
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, p := range pkts {
			clk.add(time.Second)
			if err := s.WritePacket(p.info, p.data); err != nil {
				if !errors.Is(err, ErrAutostop) {
					t.Fatal(err)
				}
				break
			}
			n++
		}
		if err := s.Close(LiveStats{Received: uint64(n)}, time.Time{}); err != nil {
			t.Fatal(err)
		}
		if names := s.Files(); len(names) != 3 || n == len(pkts) {
			t.Fatalf("%d packets in %d files %q, want 3 files and a stop", n, len(names), names)
		}
		checkSinkFiles(t, s.Files(), pkts[:n], LiveStats{Received: uint64(n)})
	})
	for _, o := range []SinkOptions{
		{Path: "-", StopFileSizeKB: 1},
		{Path: filepath.Join(t.TempDir(), "x.pcapng"), StopFiles: 2},
	} {
		if _, err := NewSink(o); err == nil {
			t.Errorf("%+v: no error", o)
		}
	}
}

// TestSinkKeepsExistingFile: an existing file stops the sink before
// anything is written, unless Overwrite (capture --force).
func TestSinkKeepsExistingFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cap.pcapng")
	if err := os.WriteFile(path, []byte("precious"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := NewSink(SinkOptions{Path: path, LinkType: layers.LinkTypeEthernet}); err == nil || !strings.Contains(err.Error(), "add --force") {
		t.Fatalf("an existing file: %v", err)
	}
	if b, _ := os.ReadFile(path); string(b) != "precious" {
		t.Fatal("the existing file was changed")
	}
	s, err := NewSink(SinkOptions{Path: path, LinkType: layers.LinkTypeEthernet, Overwrite: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(LiveStats{}, time.Time{}); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); string(b) == "precious" {
		t.Fatal("Overwrite did not replace the file")
	}
}
