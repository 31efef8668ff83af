package tui

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/rocetap/rocetap/capture"
	"github.com/rocetap/rocetap/decode"
	"github.com/rocetap/rocetap/flow"
	"github.com/rocetap/rocetap/stream"
)

const td = "../testdata/"

// refPacket is what capture.Open and a direct tracker run give for one
// packet: the reference the index is checked against.
type refPacket struct {
	data    []byte
	info    capture.PacketInfo
	session uint32
	events  decode.Event
	rel     time.Duration // frame.time_relative
	delta   time.Duration // frame.time_delta
	len     int           // frame.len and frame.cap_len as decoding sets them
	capLen  int           // (an ERF record's header is not the frame's)
}

// refCapture is a capture read the way the decode and stats commands read
// it: capture.Open, then decode and track every packet in order.
type refCapture struct {
	pkts     []refPacket
	err      error // what stopped the reader (nil at a clean end)
	sessions int
	expert   flow.ExpertLog
}

func readRef(t testing.TB, path string) *refCapture {
	t.Helper()
	r, err := capture.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	ref := &refCapture{}
	tr := flow.New(flow.Options{OnEvent: ref.expert.Add, InterfaceSpeed: r.InterfaceSpeed}) // PFC pause times at if_speed, as stream reads them
	p := new(decode.Packet)
	var first, prev int64
	for n := 1; ; n++ {
		data, info, err := r.Next()
		if err != nil {
			if !errors.Is(err, io.EOF) {
				ref.err = err
			}
			break
		}
		ns := info.Timestamp.UnixNano()
		if n == 1 {
			first, prev = ns, ns
		}
		p.Frame = decode.Frame{Number: n, Time: info.Timestamp, TimeRelative: time.Duration(ns - first),
			TimeDelta: time.Duration(ns - prev), Len: info.Length, Interface: info.InterfaceIndex}
		prev = ns
		decode.Decode(p, data, info.LinkType)
		tr.Track(p)
		ref.pkts = append(ref.pkts, refPacket{data: bytes.Clone(data), info: info, session: p.Analysis.Session,
			events: p.Analysis.Events, rel: p.Frame.TimeRelative, delta: p.Frame.TimeDelta, len: p.Frame.Len, capLen: p.Frame.CapLen})
	}
	tr.Flush()
	ref.sessions = len(tr.Sessions())
	return ref
}

func newTracker(onEvent func(*flow.Event)) *flow.Tracker {
	return flow.New(flow.Options{OnEvent: onEvent})
}

// buildIndex opens path and indexes it synchronously, with a tracker.
func buildIndex(t testing.TB, path string) *Index {
	t.Helper()
	ix, err := OpenIndex(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	ix.Build(BuildOptions{NewTracker: newTracker})
	return ix
}

func testCaptures(t *testing.T) []string {
	t.Helper()
	rxe, _ := filepath.Glob(td + "rxe/*.pcap")
	synth, _ := filepath.Glob(td + "synth/*")
	if len(rxe) < 30 || len(synth) < 10 {
		t.Fatalf("want the testdata captures, found %d in rxe/ and %d in synth/", len(rxe), len(synth))
	}
	return append(rxe, synth...)
}

// TestIndexMatchesReader indexes every test capture and checks each entry
// against capture.Open's packet and a direct tracker run: the count, the
// number, time, lengths and link type, the bytes Read gives back, the
// session and findings, and the frame times Decode sets.
func TestIndexMatchesReader(t *testing.T) {
	t.Parallel()
	for _, path := range testCaptures(t) {
		t.Run(filepath.Base(path), func(t *testing.T) {
			ref := readRef(t, path)
			ix := buildIndex(t, path)
			done, err := ix.Done()
			if !done {
				t.Fatal("Build returned but Done says the index is incomplete")
			}
			checkSameError(t, err, ref.err)
			if ix.Len() != len(ref.pkts) {
				t.Fatalf("Len %d, the reader gives %d packets", ix.Len(), len(ref.pkts))
			}
			if len(ref.pkts) > 0 && !ix.Start().Equal(ref.pkts[0].info.Timestamp) {
				t.Errorf("Start %v, first packet at %v", ix.Start(), ref.pkts[0].info.Timestamp)
			}
			var buf []byte
			var p decode.Packet
			for i, rp := range ref.pkts {
				e, ok := ix.Entry(i)
				if !ok {
					t.Fatalf("no entry %d", i)
				}
				want := Entry{Number: i + 1, CapLen: len(rp.data), Length: rp.info.Length, LinkType: rp.info.LinkType,
					Interface: rp.info.InterfaceIndex, Session: rp.session, Events: rp.events, Offset: e.Offset,
					ulp: e.ulp} // (the ULP tags: ulp_test.go)
				if got := e; got.Time.Equal(rp.info.Timestamp) {
					got.Time = time.Time{}
					if got != want {
						t.Errorf("packet %d: entry %+v, want %+v", i+1, got, want)
					}
				} else {
					t.Errorf("packet %d: time %v, want %v", i+1, e.Time, rp.info.Timestamp)
				}
				data, re, err := ix.Read(i, buf)
				if err != nil {
					t.Fatalf("Read(%d): %v", i, err)
				}
				buf = data
				if !bytes.Equal(data, rp.data) || re.Number != i+1 {
					t.Errorf("packet %d: Read gives %d bytes (entry %d) that differ from the reader's %d", i+1, len(data), re.Number, len(rp.data))
				}
				if _, err := ix.Decode(i, &p, buf); err != nil {
					t.Fatalf("Decode(%d): %v", i, err)
				}
				if p.Frame.Number != i+1 || p.Frame.TimeRelative != rp.rel || p.Frame.TimeDelta != rp.delta || p.Frame.Len != rp.len || p.Frame.CapLen != rp.capLen ||
					p.Frame.Interface != rp.info.InterfaceIndex {
					t.Errorf("packet %d: Decode set frame %d rel %v delta %v len %d caplen %d interface %d, want rel %v delta %v len %d caplen %d interface %d",
						i+1, p.Frame.Number, p.Frame.TimeRelative, p.Frame.TimeDelta, p.Frame.Len, p.Frame.CapLen, p.Frame.Interface,
						rp.rel, rp.delta, rp.len, rp.capLen, rp.info.InterfaceIndex)
				}
			}
			if _, ok := ix.Entry(len(ref.pkts)); ok {
				t.Error("an entry past the end")
			}
			if _, ok := ix.Entry(-1); ok {
				t.Error("an entry before the start")
			}
			if _, _, err := ix.Read(len(ref.pkts), nil); err == nil || !strings.Contains(err.Error(), "no packet "+strconv.Itoa(len(ref.pkts)+1)) {
				t.Errorf("Read past the end: %v", err)
			}
			ix.WithTracker(func(tr *flow.Tracker, expert *flow.ExpertLog) {
				if tr == nil {
					t.Fatal("no tracker")
				}
				if n := len(tr.Sessions()); n != ref.sessions {
					t.Errorf("%d sessions, a direct tracker run finds %d", n, ref.sessions)
				}
				if expert.Total() != ref.expert.Total() {
					t.Errorf("%d expert events, a direct tracker run finds %d", expert.Total(), ref.expert.Total())
				}
				got, want := expert.Groups(), ref.expert.Groups()
				for i := range min(len(got), len(want)) {
					if got[i].Kind != want[i].Kind || got[i].Count != want[i].Count {
						t.Errorf("expert group %d: %s×%d, want %s×%d", i, got[i].Name, got[i].Count, want[i].Name, want[i].Count)
					}
				}
			})
		})
	}
}

// TestIndexProgressAtEnd: once a file is indexed to its end, Progress
// says every byte of it was read.
func TestIndexProgressAtEnd(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"rxe/read_atomic.pcap", "synth/sll_sll2_raw.pcapng"} {
		ix := buildIndex(t, td+name)
		read, size := ix.Progress()
		if done, err := ix.Done(); !done || err != nil || size == 0 || read != size {
			t.Errorf("%s: Done %v, %v; Progress %d of %d bytes read at the end", name, done, err, read, size)
		}
	}
}

// checkSameError checks the index stopped where the reader did.
func checkSameError(t *testing.T, got, want error) {
	t.Helper()
	if want == nil {
		if got != nil {
			t.Fatalf("index stopped with %v; the reader reads the whole file", got)
		}
		return
	}
	var gfe, wfe *capture.FormatError
	if !errors.As(want, &wfe) {
		t.Fatalf("the reader stops with %v (not a FormatError)", want)
	}
	if !errors.As(got, &gfe) {
		t.Fatalf("index error %v, want a *capture.FormatError like the reader's %v", got, want)
	}
	if gfe.Packet != wfe.Packet || gfe.Offset != wfe.Offset || gfe.Truncated != wfe.Truncated {
		t.Errorf("index stopped at packet %d offset %d (truncated %v), the reader at packet %d offset %d (truncated %v)",
			gfe.Packet, gfe.Offset, gfe.Truncated, wfe.Packet, wfe.Offset, wfe.Truncated)
	}
}

// recordOffsets returns the byte offset of every record header of a
// little-endian classic pcap.
func recordOffsets(t testing.TB, data []byte) []int {
	t.Helper()
	if binary.LittleEndian.Uint32(data) != 0xa1b2c3d4 && binary.LittleEndian.Uint32(data) != 0xa1b23c4d {
		t.Fatal("not a little-endian pcap")
	}
	var offs []int
	for off := 24; off+16 <= len(data); off += 16 + int(binary.LittleEndian.Uint32(data[off+8:])) {
		offs = append(offs, off)
	}
	return offs
}

// corruptCopy writes a copy of a testdata pcap spoiled at record k
// (0-based): "length" makes its captured length absurd, "cut" ends the
// file in the middle of its bytes. It returns the path and the record's
// offset.
func corruptCopy(t testing.TB, name string, k int, how string) (string, int) {
	t.Helper()
	data, err := os.ReadFile(td + name)
	if err != nil {
		t.Fatal(err)
	}
	offs := recordOffsets(t, data)
	off := offs[k]
	bad := bytes.Clone(data)
	switch how {
	case "length":
		binary.LittleEndian.PutUint32(bad[off+8:], 0x7fffffff)
	case "cut":
		bad = bad[:off+16+int(binary.LittleEndian.Uint32(data[off+8:]))/2]
	default:
		t.Fatalf("corruptCopy: %q", how)
	}
	path := filepath.Join(t.TempDir(), how+"_"+filepath.Base(name))
	if err := os.WriteFile(path, bad, 0o644); err != nil {
		t.Fatal(err)
	}
	return path, off
}

// TestIndexCorruptHalfway: a file corrupt (or cut short) in the middle
// keeps every packet before the bad record, and Done's error names the
// packet number and byte offset.
func TestIndexCorruptHalfway(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		how, want string
	}{
		{"length", "corrupt capture"},
		{"cut", "truncated capture"},
	} {
		t.Run(c.how, func(t *testing.T) {
			path, off := corruptCopy(t, "rxe/read_atomic.pcap", 8, c.how)
			ix := buildIndex(t, path)
			done, err := ix.Done()
			if !done || err == nil {
				t.Fatalf("Done() = %v, %v: want the index complete with an error", done, err)
			}
			if ix.Len() != 8 {
				t.Errorf("Len %d, want the 8 good packets before the bad one", ix.Len())
			}
			for _, want := range []string{c.want, "packet 9", "byte offset " + strconv.Itoa(off)} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not say %q", err, want)
				}
			}
			var fe *capture.FormatError
			if !errors.As(err, &fe) || fe.Packet != 9 || fe.Offset != int64(off) {
				t.Errorf("error %v: want a *capture.FormatError at packet 9, offset %d", err, off)
			}
			if c.how == "cut" && !errors.Is(err, io.ErrUnexpectedEOF) {
				t.Errorf("a cut-short file's error %v is not io.ErrUnexpectedEOF", err)
			}
			ref := readRef(t, td+"rxe/read_atomic.pcap")
			for i := range 8 {
				data, _, err := ix.Read(i, nil)
				if err != nil || !bytes.Equal(data, ref.pkts[i].data) {
					t.Errorf("packet %d: %v, or its bytes differ", i+1, err)
				}
			}
		})
	}
}

// TestIndexNotACapture: a file that is no capture stops the index at once
// with the reader's error.
func TestIndexNotACapture(t *testing.T) {
	t.Parallel()
	ix := buildIndex(t, td+"rxe/README.md")
	done, err := ix.Done()
	if !done || !errors.Is(err, capture.ErrUnknownFormat) || ix.Len() != 0 {
		t.Errorf("Done() = %v, %v with %d packets: want ErrUnknownFormat and none", done, err, ix.Len())
	}
	if _, err := OpenIndex(filepath.Join(t.TempDir(), "missing.pcap")); err == nil || !strings.Contains(err.Error(), "missing.pcap") {
		t.Errorf("OpenIndex of a missing file: %v", err)
	}
}

// writeGradually writes data to w in small pieces, cutting records
// anywhere, then closes w with err (nil: the stream's end).
func writeGradually(t *testing.T, w *io.PipeWriter, data []byte, piece int, err error) {
	for off := 0; off < len(data); off += piece {
		if _, err := w.Write(data[off:min(off+piece, len(data))]); err != nil {
			t.Error(err)
			break
		}
		time.Sleep(time.Millisecond)
	}
	w.CloseWithError(err)
}

// TestOpenSpool indexes a stream's spool while the stream is still being
// copied into it: the index grows as the file does and ends with every
// packet; a stream cut inside a record ends with the good packets and the
// truncation; a stream that fails ends with the good packets and the
// stream's error (which the copy once dropped).
func TestOpenSpool(t *testing.T) {
	t.Parallel()
	full, err := os.ReadFile(td + "rxe/cm_rping.pcap")
	if err != nil {
		t.Fatal(err)
	}
	ref := readRef(t, td+"rxe/cm_rping.pcap")
	offs := recordOffsets(t, full)
	broken := errors.New("connection reset by peer")
	for _, c := range []struct {
		name string
		data []byte
		err  error // the stream's
		want int   // packets
	}{
		{"whole", full, nil, len(ref.pkts)},
		{"cut", full[:offs[20]+30], nil, 20},
		{"broken", full[:offs[20]+30], broken, 20},
	} {
		t.Run(c.name, func(t *testing.T) {
			pr, pw := io.Pipe()
			sp, err := stream.SpoolStream(pr)
			if err != nil {
				t.Fatal(err)
			}
			defer sp.Close()
			ix, err := OpenSpool(sp)
			if err != nil {
				t.Fatal(err)
			}
			defer ix.Close()
			var notified atomic.Int32
			built := make(chan struct{})
			go func() {
				ix.Build(BuildOptions{NewTracker: newTracker, Notify: func() { notified.Add(1) }})
				close(built)
			}()
			go writeGradually(t, pw, c.data, 97, c.err)
			// Len only grows while the file is written.
			last := 0
		watch:
			for {
				select {
				case <-built:
					break watch
				case <-time.After(time.Millisecond):
					n := ix.Len()
					if n < last {
						t.Fatalf("Len went from %d to %d", last, n)
					}
					last = n
				case <-time.After(10 * time.Second):
					t.Fatalf("Build still running 10 s after the writer started (%d packets)", ix.Len())
				}
			}
			done, err := ix.Done()
			if !done || ix.Len() != c.want {
				t.Fatalf("Done %v with %d packets, want %d (err %v)", done, ix.Len(), c.want, err)
			}
			var ce *stream.CorruptError
			switch {
			case c.want == len(ref.pkts):
				if err != nil {
					t.Errorf("complete stream: %v", err)
				}
			case c.err != nil:
				if !errors.Is(err, c.err) || !errors.As(err, &ce) || ce.Packets != c.want || !strings.Contains(err.Error(), "the stream stopped after") {
					t.Errorf("stream failing inside packet 21: %v, want the stream's error after %d packets", err, c.want)
				}
			default:
				if !errors.Is(err, io.ErrUnexpectedEOF) || !strings.Contains(err.Error(), "packet 21") {
					t.Errorf("stream cut inside packet 21: %v", err)
				}
			}
			if notified.Load() == 0 {
				t.Error("Notify never called")
			}
			if _, size := ix.Progress(); size != 0 {
				t.Errorf("a growing file's size is unknown, Progress says %d", size)
			}
			for i := range c.want {
				data, e, err := ix.Read(i, nil)
				if err != nil || !bytes.Equal(data, ref.pkts[i].data) || e.Session != ref.pkts[i].session || e.Events != ref.pkts[i].events {
					t.Errorf("packet %d: %v, or its bytes or analysis differ", i+1, err)
				}
			}
		})
	}
}

// TestIndexWhileBuilding reads entries, packets and the tracker while
// Build runs (go test -race checks the locking).
func TestIndexWhileBuilding(t *testing.T) {
	t.Parallel()
	ix, err := OpenIndex(td + "rxe/cm_rping.pcap")
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	built := make(chan struct{})
	go func() {
		ix.Build(BuildOptions{NewTracker: newTracker})
		close(built)
	}()
	var p decode.Packet
	for {
		n := ix.Len()
		if n > 0 {
			if _, err := ix.Decode(n-1, &p, nil); err != nil {
				t.Fatal(err)
			}
		}
		ix.WithTracker(func(tr *flow.Tracker, l *flow.ExpertLog) {
			if tr != nil {
				_ = tr.Sessions()
			}
			_ = l.Total()
		})
		select {
		case <-built:
			if done, err := ix.Done(); !done || err != nil || ix.Len() != 29 {
				t.Fatalf("Done %v, %v with %d packets, want 29", done, err, ix.Len())
			}
			return
		default:
		}
	}
}

// gencap writes a capture of n packets with internal/tools/gencap.
func gencap(t testing.TB, n int, path string) {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to run internal/tools/gencap")
	}
	cmd := exec.Command(goBin, "run", "../internal/tools/gencap", "-n", strconv.Itoa(n), "-o", path)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("gencap: %v\n%s", err, out)
	}
}

// TestIndexMemory builds the index of a 1,000,000-packet gencap capture
// and checks the heap grows by at most BytesPerPacket per packet, plus one
// chunk of entries (the last chunk is allocated whole) and a little.
func TestIndexMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("writes a 870 MB capture (-short)")
	}
	const n = 1000000
	path := filepath.Join(t.TempDir(), "gencap.pcap")
	gencap(t, n, path)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	ix, err := OpenIndex(path)
	if err != nil {
		t.Fatal(err)
	}
	ix.Build(BuildOptions{})
	runtime.GC()
	runtime.ReadMemStats(&after)
	if done, err := ix.Done(); !done || err != nil || ix.Len() != n {
		t.Fatalf("Done %v, %v with %d packets, want %d", done, err, ix.Len(), n)
	}
	grew := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	const slack = chunkSize*BytesPerPacket + 256<<10
	t.Logf("index of %d packets: heap grew %d bytes, %.2f bytes/packet", n, grew, float64(grew)/n)
	if grew > n*BytesPerPacket+slack {
		t.Errorf("heap grew %d bytes for %d packets (%.2f bytes/packet): want at most %d per packet plus %d",
			grew, n, float64(grew)/n, BytesPerPacket, slack)
	}
	runtime.KeepAlive(ix)
	ix.Close()
}

// TestIndexEntrySize: an entry is the 40 bytes BytesPerPacket promises.
func TestIndexEntrySize(t *testing.T) {
	t.Parallel()
	if n := unsafe.Sizeof(entry{}); n != BytesPerPacket {
		t.Errorf("an index entry takes %d bytes, BytesPerPacket says %d", n, BytesPerPacket)
	}
}

// writeInterfaces writes a pcapng with ifaces Ethernet interfaces and
// one RoCE packet on each in turn, n packets; packet big (0-based, -1:
// none) is padded to 17 MiB, beyond the index's 24 bits of caplen.
func writeInterfaces(t *testing.T, ifaces, n, big int) (string, []refPacket) {
	t.Helper()
	src := readRef(t, td+"rxe/read_atomic.pcap").pkts
	path := filepath.Join(t.TempDir(), "ifaces.pcapng")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	bw := bufio.NewWriter(f)
	w, err := capture.NewPcapngWriter(bw)
	if err != nil {
		t.Fatal(err)
	}
	for i := range ifaces {
		if _, err := w.AddInterface(decode.LinkTypeEthernet, 0, "eth"+strconv.Itoa(i), true); err != nil {
			t.Fatal(err)
		}
	}
	var pkts []refPacket
	ts := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	for i := range n {
		p := src[i%len(src)]
		p.info.InterfaceIndex = i % ifaces
		p.info.Timestamp = ts.Add(time.Duration(i) * time.Microsecond)
		if i == big {
			p.data = append(bytes.Clone(p.data), make([]byte, 17<<20)...)
			p.info.Length = len(p.data)
		}
		p.info.CaptureLength = len(p.data)
		if err := w.WritePacket(p.info, p.data); err != nil {
			t.Fatal(err)
		}
		pkts = append(pkts, p)
	}
	if err := bw.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return path, pkts
}

// TestIndexInterfaces: the index keeps each packet's interface (as
// frame.interface_id) for 20 interfaces, a packet of 17 MiB keeps its
// length, and more interfaces than the index has slots stop it with an
// error after the packets before.
func TestIndexInterfaces(t *testing.T) {
	t.Parallel()
	path, pkts := writeInterfaces(t, 20, 60, 23)
	ix := buildIndex(t, path)
	if done, err := ix.Done(); !done || err != nil || ix.Len() != len(pkts) {
		t.Fatalf("Done %v, %v with %d packets, want %d", done, err, ix.Len(), len(pkts))
	}
	var p decode.Packet
	for i, rp := range pkts {
		data, e, err := ix.Read(i, nil)
		if err != nil || !bytes.Equal(data, rp.data) || e.Interface != rp.info.InterfaceIndex || e.CapLen != len(rp.data) {
			t.Errorf("packet %d: %v; interface %d, %d bytes; want interface %d, %d bytes", i+1, err, e.Interface, e.CapLen, rp.info.InterfaceIndex, len(rp.data))
		}
		if _, err := ix.Decode(i, &p, nil); err != nil || p.Frame.Interface != rp.info.InterfaceIndex || p.Frame.CapLen != len(rp.data) {
			t.Errorf("packet %d: Decode gives interface %d, %d bytes (%v)", i+1, p.Frame.Interface, p.Frame.CapLen, err)
		}
	}
	n := 0
	if err := ix.Scan(0, ix.Len(), func(i int, data []byte, e Entry) bool {
		if !bytes.Equal(data, pkts[i].data) || e.Interface != pkts[i].info.InterfaceIndex {
			t.Errorf("Scan: packet %d differs", i+1)
		}
		n++
		return true
	}); err != nil || n != len(pkts) {
		t.Errorf("Scan: %d packets, %v", n, err)
	}

	path, _ = writeInterfaces(t, maxSlots+10, maxSlots+10, -1)
	ix = buildIndex(t, path)
	done, err := ix.Done()
	if !done || err == nil || !strings.Contains(err.Error(), "packet 257: more than 256 interfaces") || ix.Len() != maxSlots {
		t.Errorf("Done %v, %v with %d packets: want the %d packets before the 257th interface and an error", done, err, ix.Len(), maxSlots)
	}
}
