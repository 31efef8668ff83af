package stream

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/iotest"
	"time"

	"github.com/rocetap/rocetap/capture"
	"github.com/rocetap/rocetap/decode"
	"github.com/rocetap/rocetap/decode/filter"
	"github.com/rocetap/rocetap/flow"
)

const td = "../testdata/"

// refPacket is a packet as capture.Reader gives it.
type refPacket struct {
	data []byte
	info capture.PacketInfo
}

// readAll reads a capture with capture.Reader, the reference.
func readAll(t testing.TB, path string) ([]refPacket, error) {
	t.Helper()
	r, err := capture.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var pkts []refPacket
	for {
		data, info, err := r.Next()
		if errors.Is(err, io.EOF) {
			return pkts, nil
		}
		if err != nil {
			return pkts, err
		}
		pkts = append(pkts, refPacket{bytes.Clone(data), info})
	}
}

// writeCapture writes n packets, read_atomic.pcap's over and over, to a
// pcap in a temporary directory, 1 to 4 µs apart.
func writeCapture(t testing.TB, n int) (string, []refPacket) {
	t.Helper()
	src, err := readAll(t, td+"rxe/read_atomic.pcap")
	if err != nil {
		t.Fatal(err)
	}
	var pkts []refPacket
	for i := range n {
		pkts = append(pkts, src[i%len(src)])
	}
	return writePackets(t, pkts)
}

// writePackets writes packets to a pcap in a temporary directory, 1 to 4
// µs apart.
func writePackets(t testing.TB, src []refPacket) (string, []refPacket) {
	t.Helper()
	n := len(src)
	path := filepath.Join(t.TempDir(), "many.pcap")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	bw := bufio.NewWriter(f)
	w, err := capture.NewPcapWriter(bw, src[0].info.LinkType, 0, true)
	if err != nil {
		t.Fatal(err)
	}
	ts := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	for i := range n {
		p := src[i]
		ts = ts.Add(time.Duration(1000 * (1 + i%4)))
		p.info.Timestamp = ts
		if err := w.WritePacket(p.info, p.data); err != nil {
			t.Fatal(err)
		}
	}
	if err := bw.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	got, err := readAll(t, path)
	if err != nil || len(got) != n {
		t.Fatalf("wrote %d packets, read %d back (%v)", n, len(got), err)
	}
	return path, got
}

// cutCapture writes a copy of path cut in the middle of packet k's bytes
// (1-based, a little-endian pcap).
func cutCapture(t testing.TB, path string, k int) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	off := 24
	for range k - 1 {
		off += 16 + int(uint32(data[off+8])|uint32(data[off+9])<<8|uint32(data[off+10])<<16|uint32(data[off+11])<<24)
	}
	cut := filepath.Join(t.TempDir(), "cut.pcap")
	if err := os.WriteFile(cut, data[:off+16+10], 0o644); err != nil {
		t.Fatal(err)
	}
	return cut
}

func open(t testing.TB, path string) *Source {
	t.Helper()
	src, err := Open(path, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { src.Close() })
	return src
}

// checkFrame compares a frame with what the reader says of packet n.
func checkFrame(t *testing.T, what string, f decode.Frame, n int, ref []refPacket) {
	t.Helper()
	info := ref[n-1].info
	prev := ref[max(0, n-2)].info.Timestamp
	if f.Number != n || !f.Time.Equal(info.Timestamp) || f.TimeRelative != info.Timestamp.Sub(ref[0].info.Timestamp) ||
		f.TimeDelta != info.Timestamp.Sub(prev) || f.Len != info.Length || f.Interface != info.InterfaceIndex {
		t.Errorf("%s: packet %d: frame %d at %v (+%v, Δ%v), %d bytes, interface %d; the reader says %v, %d bytes, interface %d",
			what, n, f.Number, f.Time, f.TimeRelative, f.TimeDelta, f.Len, f.Interface, info.Timestamp, info.Length, info.InterfaceIndex)
	}
}

// TestReadFrames: Read hands on every packet with the reader's bytes and
// info, numbered and timed, and SetFrameAt gives each packet the frame Read
// gave it (the TUI's index reads packets again at random).
func TestReadFrames(t *testing.T) {
	for _, name := range []string{"synth/sll_sll2_raw.pcapng", "synth/ns_timestamps.pcap", "rxe/cm_rping.pcap", "synth/erf_ib_eth.pcap"} {
		t.Run(name, func(t *testing.T) {
			ref, err := readAll(t, td+name)
			if err != nil {
				t.Fatal(err)
			}
			src := open(t, td+name)
			n := 0
			var first, prev int64
			err = src.Read(func(pk *Packet) error {
				n++
				if pk.Number != n || n > len(ref) || !bytes.Equal(pk.Data, ref[n-1].data) || pk.Info != ref[n-1].info {
					t.Fatalf("packet %d: Read gives number %d, info %+v, %d bytes", n, pk.Number, pk.Info, len(pk.Data))
				}
				var f decode.Frame
				pk.SetFrame(&f)
				checkFrame(t, "Read", f, n, ref)
				ts := pk.Info.Timestamp.UnixNano()
				if n == 1 {
					first, prev = ts, ts
				}
				SetFrameAt(&f, n, time.Unix(0, ts), first, prev, pk.Info.Length, pk.Info.InterfaceIndex)
				checkFrame(t, "SetFrameAt", f, n, ref)
				prev = ts
				return nil
			})
			if err != nil || n != len(ref) {
				t.Errorf("Read: %v after %d packets, want nil after %d", err, n, len(ref))
			}
		})
	}
	// The interfaces of the pcapng are those the frames carry.
	ref, _ := readAll(t, td+"synth/sll_sll2_raw.pcapng")
	var ifaces []int
	for _, p := range ref {
		ifaces = append(ifaces, p.info.InterfaceIndex)
	}
	if !slices.Equal(ifaces, []int{0, 1, 2, 0, 1, 2}) {
		t.Errorf("sll_sll2_raw.pcapng's interfaces %v: the test wants three", ifaces)
	}
}

// TestSetFrameSetsAll: setFrame sets every field of a decode.Frame (it
// sets them one by one, so a new field could be left over from the
// previous packet).
func TestSetFrameSetsAll(t *testing.T) {
	var f decode.Frame
	v := reflect.ValueOf(&f).Elem()
	for i := range v.NumField() { // something in every field
		switch fv := v.Field(i); fv.Kind() {
		case reflect.Int, reflect.Int64:
			fv.SetInt(-7)
		case reflect.Uint16:
			fv.SetUint(7)
		case reflect.Slice:
			fv.SetBytes([]byte{7})
		case reflect.Struct:
			fv.Set(reflect.ValueOf(time.Unix(7, 7)))
		default:
			t.Fatalf("decode.Frame.%s: a %s; teach this test to fill it", v.Type().Field(i).Name, fv.Kind())
		}
	}
	ts := time.Unix(100, 5)
	setFrame(&f, 3, ts, ts.UnixNano(), ts.UnixNano()-50, ts.UnixNano()-20, 128, 2)
	want := decode.Frame{Number: 3, Time: ts, TimeRelative: 50, TimeDelta: 20, Len: 128, Interface: 2}
	if !reflect.DeepEqual(f, want) {
		t.Errorf("setFrame gives %+v, want %+v", f, want)
	}
}

// TestReadCorrupt: a capture cut short ends with a *CorruptError that
// wraps the reader's error, after every packet before it.
func TestReadCorrupt(t *testing.T) {
	path, _ := writeCapture(t, 20)
	src := open(t, cutCapture(t, path, 13))
	n := 0
	err := src.Read(func(pk *Packet) error { n = pk.Number; return nil })
	var ce *CorruptError
	var fe *capture.FormatError
	if !errors.As(err, &ce) || ce.Packets != 12 || n != 12 || !errors.As(err, &fe) || fe.Packet != 13 ||
		!errors.Is(err, io.ErrUnexpectedEOF) || err.Error() != fe.Error() {
		t.Errorf("Read of a capture cut in packet 13: %v after %d packets; want a CorruptError after 12 wrapping the reader's", err, n)
	}
	if _, err := Open(td+"rxe/README.md", "", nil); !errors.Is(err, capture.ErrUnknownFormat) || errors.As(err, &ce) {
		t.Errorf("Open of a file that is no capture: %v", err)
	}
}

// TestReadStop: the ways a Read ends early.
func TestReadStop(t *testing.T) {
	path, _ := writeCapture(t, 20)
	boom := errors.New("boom")
	for _, c := range []struct {
		name    string
		setup   func(s *Source)
		fn      func(s *Source, pk *Packet) error
		want    int
		wantErr error
	}{
		{"ErrStop", nil, func(_ *Source, pk *Packet) error {
			if pk.Number == 3 {
				return ErrStop
			}
			return nil
		}, 3, nil},
		{"error", nil, func(_ *Source, pk *Packet) error {
			if pk.Number == 5 {
				return boom
			}
			return nil
		}, 5, boom},
		{"StopAfter", func(s *Source) { s.StopAfter(7) }, nil, 7, nil},
		{"Stop", nil, func(s *Source, pk *Packet) error {
			if pk.Number == 2 {
				s.Stop()
			}
			return nil
		}, 2, nil},
		{"StopOn", func(s *Source) {
			sigs := make(chan os.Signal, 1)
			sigs <- os.Interrupt
			s.StopOn(sigs, 0)
			time.Sleep(10 * time.Millisecond)
		}, nil, 0, nil},
		{"all", nil, nil, 20, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			src := open(t, path)
			if c.setup != nil {
				c.setup(src)
			}
			n := 0
			err := src.Read(func(pk *Packet) error {
				n = pk.Number
				if c.fn != nil {
					return c.fn(src, pk)
				}
				return nil
			})
			if n != c.want || err != c.wantErr {
				t.Errorf("Read ended after %d packets with %v, want %d and %v", n, err, c.want, c.wantErr)
			}
		})
	}
}

// summary renders what a test can check: the frame number and the opcode.
func summary(dst []byte, p *decode.Packet) []byte {
	return fmt.Appendf(dst, "%d %d %v\n", p.Frame.Number, p.BTH.Opcode, p.Frame.TimeRelative)
}

// TestParallel: whatever the workers, outputs come in capture order, the
// filter and the limit apply, and a capture cut short emits every packet
// before the bad one, then says so.
func TestParallel(t *testing.T) {
	for _, procs := range []int{4, 1} {
		t.Run("GOMAXPROCS="+strconv.Itoa(procs), func(t *testing.T) {
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
			testParallel(t)
		})
	}
}

func testParallel(t *testing.T) {
	t.Setenv("ROCETAP_WORKERS", "") // (it would take the pipeline on one P)
	path, ref := writeCapture(t, 5000)
	want := func(flt *filter.Filter, limit int) []string {
		var out []string
		src := open(t, path)
		p := new(decode.Packet)
		src.Read(func(pk *Packet) error {
			pk.SetFrame(&p.Frame)
			decode.Decode(p, pk.Data, pk.Info.LinkType)
			if flt == nil || flt.Match(p) {
				out = append(out, string(summary(nil, p)))
			}
			if limit > 0 && len(out) == limit {
				return ErrStop
			}
			return nil
		})
		return out
	}
	acks, err := filter.Compile("infiniband.bth.opcode == 16")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name    string
		workers int
		flt     *filter.Filter
		limit   int
	}{
		{"one worker", 1, nil, 0},
		{"three workers", 3, nil, 0},
		{"filter", 3, acks, 0},
		{"limit", 2, nil, 1234},
		{"filter and limit", 2, acks, 100},
	} {
		for _, inline := range []bool{false, true} {
			name := c.name
			if inline {
				name += ", EmitInline set"
			}
			t.Run(name, func(t *testing.T) {
				var got []string
				flushes, emits := 0, 0
				o := ParallelOptions{Decoder: decode.NewDecoder(), Workers: c.workers, Filter: c.flt, Limit: c.limit,
					NewRender: func() Render { return summary },
					Emit: func(i int, out []byte) {
						if i != len(got) {
							t.Fatalf("Emit(%d) after %d outputs", i, len(got))
						}
						emits++
						got = append(got, string(out))
					},
					Flush: func() error { flushes++; return nil }}
				if inline {
					// rendered onto the end of what came before
					var buf []byte
					o.EmitInline = func(i int, render Render, p *decode.Packet) {
						if i != len(got) {
							t.Fatalf("EmitInline(%d) after %d outputs", i, len(got))
						}
						from := len(buf)
						buf = render(buf, p)
						got = append(got, string(buf[from:]))
					}
				}
				n, err := open(t, path).Parallel(o)
				w := want(c.flt, c.limit)
				if err != nil || n != len(w) || !slices.Equal(got, w) {
					t.Errorf("Parallel: %d outputs, %v; want the %d outputs of a sequential read in order", n, err, len(w))
				}
				if c.limit == 0 && flushes < len(ref)/batchSize {
					t.Errorf("Flush called %d times for %d packets", flushes, len(ref))
				}
				if inline && runtime.GOMAXPROCS(0) <= minParallelProcs && emits > 0 {
					t.Errorf("Emit called %d times on one goroutine, where EmitInline renders", emits)
				}
			})
		}
	}
	t.Run("bytes kept in the reader's buffers", func(t *testing.T) {
		// A stream that comes in pieces makes the capture reader move to a
		// new buffer before nearly every packet: each packet's bytes must
		// still be the ones the reader returned when a worker decodes them.
		bytesOf := func(dst []byte, p *decode.Packet) []byte {
			return fmt.Appendf(dst, "%d %08x\n", p.Frame.Number, crc32.ChecksumIEEE(p.Frame.Data))
		}
		var want []string
		for _, r := range ref {
			want = append(want, fmt.Sprintf("%d %08x\n", len(want)+1, crc32.ChecksumIEEE(r.data)))
		}
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		src, err := Open("-", "", iotest.HalfReader(f))
		if err != nil {
			t.Fatal(err)
		}
		defer src.Close()
		var got []string
		_, err = src.Parallel(ParallelOptions{Decoder: decode.NewDecoder(), Workers: 2,
			NewRender: func() Render { return bytesOf }, Emit: func(i int, out []byte) { got = append(got, string(out)) }})
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("Parallel over a stream read in pieces: %d outputs, %v; want the %d packets' bytes", len(got), err, len(want))
		}
	})
	t.Run("cut short", func(t *testing.T) {
		var got int
		n, err := open(t, cutCapture(t, path, 3001)).Parallel(ParallelOptions{Decoder: decode.NewDecoder(), Workers: 2,
			NewRender: func() Render { return summary }, Emit: func(int, []byte) { got++ }})
		var ce *CorruptError
		if n != 3000 || got != 3000 || !errors.As(err, &ce) || ce.Packets != 3000 {
			t.Errorf("Parallel of a capture cut in packet 3001: %d outputs, %v", n, err)
		}
	})
	t.Run("flush error", func(t *testing.T) {
		full := errors.New("disk full")
		n, err := open(t, path).Parallel(ParallelOptions{Decoder: decode.NewDecoder(), Workers: 2,
			NewRender: func() Render { return summary }, Emit: func(int, []byte) {}, Flush: func() error { return full }})
		if err != full || n != batchSize {
			t.Errorf("Parallel with a failing Flush: %d outputs, %v; want one batch and the error", n, err)
		}
	})
}

// tracked is what Each saw of one packet.
type tracked struct {
	number  int
	session uint32
	events  decode.Event
}

// TestTrackPaths: Track's paths (one goroutine, a reader goroutine, and
// replay's one-goroutine choice) pass the same packets with the same
// analysis; the limit stops them; the tracker is flushed at the end of
// the capture, and a capture cut short ends with a *CorruptError.
func TestTrackPaths(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	path, _ := writeCapture(t, 3000)
	acks, _ := filter.Compile("infiniband.bth.opcode == 16 and not rocetap.analysis.duplicate")
	run := func(path, workers string, one bool, flt *filter.Filter, limit int) ([]tracked, int, int, error) {
		t.Setenv("ROCETAP_WORKERS", workers)
		var seen []tracked
		events := 0
		tr := flow.New(flow.Options{OnEvent: func(*flow.Event) { events++ }})
		n, err := open(t, path).Track(TrackOptions{Decoder: decode.NewDecoder(), OneGoroutine: one, Pass: Pass{
			Tracker: tr, Filter: flt, Limit: limit,
			Each: func(p *decode.Packet) bool {
				seen = append(seen, tracked{p.Frame.Number, p.Analysis.Session, p.Analysis.Events})
				return true
			}}})
		return seen, n, events, err
	}
	for _, c := range []struct {
		name  string
		flt   *filter.Filter
		limit int
	}{{"all", nil, 0}, {"filter", acks, 0}, {"limit", nil, 700}, {"filter and limit", acks, 30}} {
		t.Run(c.name, func(t *testing.T) {
			ref, n, refEvents, err := run(path, "1", false, c.flt, c.limit)
			if err != nil || n != len(ref) || len(ref) == 0 || (c.limit > 0 && n != c.limit) {
				t.Fatalf("one goroutine: %d passed, %v", n, err)
			}
			for _, p := range []struct {
				workers string
				one     bool
			}{{"", false}, {"", true}, {"2", true}, {"2", false}} {
				got, n, events, err := run(path, p.workers, p.one, c.flt, c.limit)
				if err != nil || n != len(got) || !slices.Equal(got, ref) || events != refEvents {
					t.Errorf("ROCETAP_WORKERS=%q OneGoroutine %v: %d passed, %d events, %v; one goroutine passes %d, %d events",
						p.workers, p.one, n, events, err, len(ref), refEvents)
				}
			}
		})
	}
	t.Run("cut short", func(t *testing.T) {
		cut := cutCapture(t, path, 2001)
		for _, workers := range []string{"1", ""} {
			seen, n, _, err := run(cut, workers, false, nil, 0)
			var ce *CorruptError
			if n != 2000 || len(seen) != 2000 || !errors.As(err, &ce) || ce.Packets != 2000 {
				t.Errorf("ROCETAP_WORKERS=%q: capture cut in packet 2001: %d passed, %v", workers, n, err)
			}
		}
	})
}

// TestTrackFlush: the tracker reports what is still open at the end of
// the capture (a request never answered), not when Each stops early.
func TestTrackFlush(t *testing.T) {
	// The first and third packets of read_atomic.pcap are READ requests:
	// without their responses, the first is never answered (the second is
	// too recent to tell).
	ra, _ := readAll(t, td+"rxe/read_atomic.pcap")
	path, _ := writePackets(t, []refPacket{ra[0], ra[2]})
	for _, c := range []struct {
		name string
		each func(*decode.Packet) bool
		want int
	}{
		{"end", func(*decode.Packet) bool { return true }, 1},
		{"stopped", func(*decode.Packet) bool { return false }, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			var kinds []string
			tr := flow.New(flow.Options{NoResponseAfter: time.Nanosecond, OnEvent: func(e *flow.Event) {
				name, _, _ := decode.EventInfo(e.Kind)
				kinds = append(kinds, name)
			}})
			if _, err := open(t, path).Track(TrackOptions{Decoder: decode.NewDecoder(), Pass: Pass{Tracker: tr, Each: c.each}}); err != nil {
				t.Fatal(err)
			}
			if len(kinds) != c.want {
				t.Errorf("events %q, want %d", kinds, c.want)
			}
		})
	}
}

func TestNeedsTracker(t *testing.T) {
	stateful, _ := filter.Compile("rocetap.analysis.retransmission")
	plain, _ := filter.Compile("infiniband.bth.opcode == 4")
	for _, c := range []struct {
		fields []string
		flt    *filter.Filter
		want   bool
	}{
		{nil, nil, false},
		{[]string{"infiniband.bth.psn", "rocetap.icrc.status"}, plain, false},
		{[]string{"infiniband.bth.psn", "rocetap.session.id"}, nil, true},
		{nil, stateful, true},
	} {
		if got := NeedsTracker(c.fields, c.flt); got != c.want {
			t.Errorf("NeedsTracker(%q, %v) = %v", c.fields, c.flt, got)
		}
	}
}

// TestProgress: on a terminal, the progress line shows while a large
// file is read, and Close clears it.
func TestProgress(t *testing.T) {
	path, _ := writeCapture(t, 5000)
	var buf bytes.Buffer
	src, err := Open(path, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	src.ShowProgress(&buf)
	start := time.Now()
	src.Read(func(pk *Packet) error {
		if pk.Number > 4096 { // the line is updated every 4096 packets
			for time.Since(start) < 600*time.Millisecond {
				time.Sleep(10 * time.Millisecond)
			}
			return ErrStop
		}
		return nil
	})
	src.Close()
	out := buf.String()
	if !strings.Contains(out, "4096 packets") || !strings.Contains(out, "packets/s") || !strings.HasSuffix(out, "\r\033[K") {
		t.Errorf("progress line %q", out)
	}
}

// fakeLive is a live capture of a few packets: then it fails with err, or
// waits for Stop.
type fakeLive struct {
	pkts     []refPacket
	err      error
	stop     chan struct{}
	stopOnce sync.Once
	closed   bool
}

func newFakeLive(pkts []refPacket, err error) *fakeLive {
	return &fakeLive{pkts: pkts, err: err, stop: make(chan struct{})}
}

func (f *fakeLive) Next() ([]byte, capture.PacketInfo, error) {
	if len(f.pkts) > 0 {
		p := f.pkts[0]
		f.pkts = f.pkts[1:]
		return p.data, p.info, nil
	}
	if f.err != nil {
		return nil, capture.PacketInfo{}, f.err
	}
	<-f.stop
	return nil, capture.PacketInfo{}, io.EOF
}

func (f *fakeLive) Close() error                      { f.closed = true; return nil }
func (f *fakeLive) Stats() (capture.LiveStats, error) { return capture.LiveStats{}, nil }
func (f *fakeLive) Stop()                             { f.stopOnce.Do(func() { close(f.stop) }) }
func (f *fakeLive) LinkType() decode.LinkType         { return decode.LinkTypeEthernet }
func (f *fakeLive) Snaplen() int                      { return 65535 }
func (f *fakeLive) Interface() string                 { return "fake0" }
func (f *fakeLive) Backend() string                   { return "fake" }

func (f *fakeLive) stopped() bool {
	select {
	case <-f.stop:
		return true
	default:
		return false
	}
}

// TestSpoolLive: a live capture's spool is read as it grows; Close stops
// the capture and removes the spool; a capture that fails stops, and the
// reader of the spool gets its error after the packets before it (the
// spool's writer once dropped it).
func TestSpoolLive(t *testing.T) {
	ref, _ := readAll(t, td+"rxe/cm_rping.pcap")
	for _, c := range []struct {
		name string
		err  error
	}{{"stopped", nil}, {"failed", errors.New("network is down")}} {
		t.Run(c.name, func(t *testing.T) {
			live := newFakeLive(ref[:10], c.err)
			sp, err := SpoolLive(live)
			if err != nil {
				t.Fatal(err)
			}
			f, err := os.Open(sp.Path())
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			src, err := ReadAt(f, sp.Path(), sp)
			if err != nil {
				t.Fatal(err)
			}
			idle := 0
			src.OnIdle(func() { idle++ })
			n := 0
			err = src.Read(func(pk *Packet) error {
				n = pk.Number
				if !bytes.Equal(pk.Data, ref[n-1].data) || !pk.Info.Timestamp.Equal(ref[n-1].info.Timestamp) {
					t.Errorf("packet %d differs from what the capture gave", n)
				}
				if n == 10 && c.err == nil {
					sp.Close() // the user quits
				}
				return nil
			})
			var ce *CorruptError
			switch {
			case n != 10:
				t.Errorf("%d packets read from the spool, want 10", n)
			case c.err == nil && (err != nil || sp.Err() != nil || idle == 0):
				t.Errorf("a stopped capture: %v, spool %v, %d idle calls", err, sp.Err(), idle)
			case c.err != nil && (!errors.Is(err, c.err) || !errors.As(err, &ce) || ce.Packets != 10 ||
				!strings.Contains(err.Error(), "the live capture stopped after 10 packets") || !live.stopped()):
				t.Errorf("a failed capture: %v (stopped %v)", err, live.stopped())
			}
			sp.Close()
			if !live.closed {
				t.Error("the live capture is not closed")
			}
			if _, err := os.Stat(sp.Path()); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("the spool is still there: %v", err)
			}
		})
	}
}

// TestLiveStopOn: a signal stops a live capture, which hands on what it
// received first.
func TestLiveStopOn(t *testing.T) {
	ref, _ := readAll(t, td+"rxe/cm_rping.pcap")
	live := newFakeLive(ref[:3], nil)
	src := Live(live)
	sigs := make(chan os.Signal, 1)
	cancel := src.StopOn(sigs, 0)
	defer cancel()
	n := 0
	err := src.Read(func(pk *Packet) error {
		n = pk.Number
		if n == 3 {
			sigs <- os.Interrupt
		}
		return nil
	})
	if err != nil || n != 3 || !live.stopped() {
		t.Errorf("after a signal: %d packets, %v, stopped %v", n, err, live.stopped())
	}
	// A live capture's own errors are not a corrupt capture's.
	boom := errors.New("socket closed")
	err = Live(newFakeLive(nil, boom)).Read(func(*Packet) error { return nil })
	if err != boom {
		t.Errorf("a failing live capture: %v", err)
	}
	// -a duration.
	live = newFakeLive(nil, nil)
	src = Live(live)
	src.StopOn(nil, 20*time.Millisecond)
	if err := src.Read(func(*Packet) error { return nil }); err != nil || !live.stopped() {
		t.Errorf("after the duration: %v, stopped %v", err, live.stopped())
	}
}
