package capture

import (
	"bytes"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"testing/iotest"

	"github.com/gopacket/gopacket/layers"
)

var writeSeeds = flag.Bool("writeseeds", false, "rewrite the committed fuzz seed corpus in testdata/fuzz")

// readResult is everything a reader produced from an input.
type readResult struct {
	pkts    []pkt
	offsets []int64
	err     error
}

// fuzzRead reads b completely from src with the invariants every input must
// keep; at most max packets are kept. setup, if given, prepares the reader
// once it is open (read-ahead).
func fuzzRead(t *testing.T, b []byte, src io.Reader, format string, setup ...func(*Reader)) readResult {
	var res readResult
	r, err := NewReaderFormat(src, format)
	if err != nil {
		res.err = err
		checkFormatError(t, err, len(b))
		return res
	}
	defer r.Close()
	for _, f := range setup {
		f(r)
	}
	if r.Compression() != "" {
		// Offsets and data are the decompressed input's.
		in, _, _ := Decompressed(bytes.NewReader(b))
		b, _ = io.ReadAll(io.LimitReader(in, 64<<20))
	}
	last := int64(-1)
	for {
		data, info, err := r.Next()
		if err != nil {
			if err != io.EOF {
				res.err = err
				checkFormatError(t, err, len(b))
				if fe := (*FormatError)(nil); errors.As(err, &fe) && fe.Packet != len(res.pkts)+1 {
					t.Fatalf("error names packet %d after %d packets", fe.Packet, len(res.pkts))
				}
			}
			return res
		}
		if len(data) != info.CaptureLength || info.Length < 0 || info.InterfaceIndex < 0 {
			t.Fatalf("packet %d: len %d, info %+v", r.PacketNumber(), len(data), info)
		}
		if off := r.Offset(); off <= last || off >= int64(len(b)) || off+int64(len(data)) > int64(len(b)) {
			t.Fatalf("packet %d: offset %d after %d (input %d bytes)", r.PacketNumber(), off, last, len(b))
		} else {
			last = off
		}
		// The returned bytes are really in the input, where the offset says.
		if !bytes.Contains(b[last:], data) {
			t.Fatalf("packet %d: data not found in the input after its offset", r.PacketNumber())
		}
		res.pkts = append(res.pkts, pkt{append([]byte(nil), data...), info})
		res.offsets = append(res.offsets, last)
	}
}

// shortReads returns at most half of what is asked, like a pipe, but tells
// its size (Len) so the reader starts with a small buffer and must grow it.
type shortReads struct {
	r io.Reader
	n int
}

func (s *shortReads) Len() int { return s.n }

func (s *shortReads) Read(p []byte) (int, error) {
	return s.r.Read(p[:(len(p)+1)/2])
}

func checkFormatError(t *testing.T, err error, n int) {
	var fe *FormatError
	if errors.As(err, &fe) {
		if fe.Packet < 1 || fe.Offset < 0 || fe.Offset > int64(n) || fe.Reason == "" {
			t.Fatalf("bad FormatError %+v for a %d-byte input", fe, n)
		}
		_ = fe.Error()
	} else if de := (*DecompressError)(nil); !errors.Is(err, ErrUnknownFormat) && !errors.As(err, &de) {
		t.Fatalf("unexpected error type %T: %v", err, err)
	}
}

// sameResult checks two reads of the same input agree completely.
func sameResult(t *testing.T, a, b readResult) {
	if len(a.pkts) != len(b.pkts) {
		t.Fatalf("%d packets vs %d", len(a.pkts), len(b.pkts))
	}
	for i := range a.pkts {
		if !bytes.Equal(a.pkts[i].data, b.pkts[i].data) || a.pkts[i].info != b.pkts[i].info || a.offsets[i] != b.offsets[i] {
			t.Fatalf("packet %d differs", i+1)
		}
	}
	if fmt.Sprint(a.err) != fmt.Sprint(b.err) {
		t.Fatalf("errors differ: %v vs %v", a.err, b.err)
	}
}

// ngSeedPrefix is the length of ngBuild's Section Header Block, which
// FuzzPcapngReader supplies itself.
const ngSeedPrefix = 40

func addSeeds(f *testing.F) {
	for _, s := range fuzzSeeds() {
		f.Add(s)
	}
}

// fuzzSeeds are small valid files of every format, and damaged copies.
func fuzzSeeds() [][]byte {
	pkts := testPackets(30, 3)
	for i := range pkts {
		pkts[i].data = pkts[i].data[:min(len(pkts[i].data), 60)]
		pkts[i].info.Length = len(pkts[i].data)
	}
	pcapLE := pcapBuild(binary.LittleEndian, false, 1, 262144, pkts)
	pcapBE := pcapBuild(binary.BigEndian, true, 247, 65535, pkts)
	g := &ngBuild{}
	g.shb(binary.LittleEndian)
	g.idb(layers.LinkTypeEthernet, 0, -1, 0)
	g.idb(layers.LinkType(247), 64, 0x80|20, 5)
	g.epb(0, 1e15, 40, pkts[0].data[:30])
	g.spb(70, pkts[1].data[:20])
	g.opb(1, 1<<40, 20, pkts[2].data[:20])
	g.block(5, make([]byte, 12))
	g.shb(binary.BigEndian)
	g.idb(layers.LinkTypeRaw, 0, 9, 0)
	g.epb(0, 2e18, 10, pkts[0].data[:10])
	ng := g.buf
	var erf []byte
	for i, p := range pkts {
		erf = append(erf, erfRecord(t0, p.data[:20], i, erfTypeETH)...)
	}
	seeds := [][]byte{pcapLE, pcapBE, ng, erf}
	for _, s := range [][]byte{pcapLE, ng, erf} {
		seeds = append(seeds, s[:len(s)*2/3]) // truncated
		d := append([]byte(nil), s...)
		d[len(d)/2] ^= 0xff // damaged in the middle
		seeds = append(seeds, d)
	}
	// Compressed: gzip, zstd and LZ4 of the pcap, one of them damaged.
	for _, kind := range []string{"gzip", "zstd", "lz4"} {
		var b bytes.Buffer
		w := compressors[kind](&b)
		w.Write(pcapLE)
		w.Close()
		seeds = append(seeds, b.Bytes())
		if kind == "gzip" {
			d := bytes.Clone(b.Bytes())
			d[len(d)/2] ^= 0xff
			seeds = append(seeds, d)
		}
	}
	return seeds
}

// TestWriteFuzzSeeds rewrites the committed corpus with -writeseeds.
func TestWriteFuzzSeeds(t *testing.T) {
	if !*writeSeeds {
		t.Skip("run with -writeseeds to rewrite testdata/fuzz")
	}
	for _, fz := range []string{"FuzzReader", "FuzzPcapngReader"} {
		dir := filepath.Join("testdata", "fuzz", fz)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for i, s := range fuzzSeeds() {
			if fz == "FuzzPcapngReader" {
				if binary.LittleEndian.Uint32(s) != ngBlockSHB {
					continue
				}
				s = s[ngSeedPrefix:]
			}
			body := "go test fuzz v1\n[]byte(" + strconv.Quote(string(s)) + ")\n"
			if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("seed-%02d", i)), []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// FuzzReader: any input, detected format. Never panic; errors are typed
// and well formed; reading from a stream of short reads gives exactly what
// reading from memory gives.
func FuzzReader(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		a := fuzzRead(t, b, bytes.NewReader(b), "")
		s := fuzzRead(t, b, &shortReads{bytes.NewReader(b), len(b)}, "")
		sameResult(t, a, s)
		// Read ahead in small buffers: records straddle them.
		ra := fuzzRead(t, b, &shortReads{bytes.NewReader(b), len(b)}, "", tinyAhead)
		sameResult(t, a, ra)
		// Forced ERF accepts anything without a panic.
		fuzzRead(t, b, bytes.NewReader(b), "erf")
	})
}

// FuzzPcapngReader: the fuzzer's bytes follow a valid Section Header Block,
// so its mutations go to the blocks. Besides FuzzReader's checks, every
// packet read must survive a PcapngWriter round trip unchanged.
func FuzzPcapngReader(f *testing.F) {
	for _, s := range fuzzSeeds() {
		if len(s) > 28 && binary.LittleEndian.Uint32(s) == ngBlockSHB {
			f.Add(s[ngSeedPrefix:])
		}
	}
	g := &ngBuild{}
	g.shb(binary.LittleEndian)
	prefix := g.buf
	f.Fuzz(func(t *testing.T, body []byte) {
		b := append(append([]byte(nil), prefix...), body...)
		a := fuzzRead(t, b, bytes.NewReader(b), "pcapng")
		s := fuzzRead(t, b, iotest.OneByteReader(&shortReads{bytes.NewReader(b), len(b)}), "pcapng")
		sameResult(t, a, s)
		rewriteCheck(t, a.pkts)
	})
}

// rewriteCheck writes pkts with PcapngWriter (one interface per distinct
// link type) and reads them back.
func rewriteCheck(t *testing.T, pkts []pkt) {
	if len(pkts) == 0 {
		return
	}
	var buf bytes.Buffer
	w, err := NewPcapngWriter(&buf)
	if err != nil {
		t.Fatal(err)
	}
	ifOf := map[layers.LinkType]int{}
	var want []pkt
	for _, p := range pkts {
		id, ok := ifOf[p.info.LinkType]
		if !ok {
			id, _ = w.AddInterface(p.info.LinkType, 0, "", true)
			ifOf[p.info.LinkType] = id
		}
		info := p.info
		info.InterfaceIndex = id
		if info.Length < len(p.data) {
			info.Length = len(p.data) // the writer refuses a length below the data
		}
		if err := w.WritePacket(info, p.data); err != nil {
			continue // a timestamp pcapng nanoseconds cannot hold
		}
		want = append(want, pkt{p.data, info})
	}
	got, err := readBytes(t, buf.Bytes())
	if err != nil {
		t.Fatalf("rewritten file: %v", err)
	}
	if len(got) != len(want) {
		t.Fatalf("rewritten file has %d packets, want %d", len(got), len(want))
	}
	for i := range got {
		g, w := got[i].info, want[i].info
		if !bytes.Equal(got[i].data, want[i].data) || g.Length != w.Length || g.LinkType != w.LinkType ||
			g.InterfaceIndex != w.InterfaceIndex || (!w.Timestamp.IsZero() && !g.Timestamp.Equal(w.Timestamp)) {
			t.Fatalf("rewritten packet %d: %+v, want %+v", i+1, g, w)
		}
	}
}
