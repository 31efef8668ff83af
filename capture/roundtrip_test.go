package capture

import (
	"bytes"
	"encoding/binary"
	"io"
	"os"
	"path/filepath"
	"testing"
	"testing/iotest"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
)

// testPackets returns n packets with increasing timestamps (nanosecond
// precise), some of them with Length > CaptureLength.
func testPackets(seed uint64, n int) []pkt {
	var out []pkt
	for i, f := range frames(seed, n, 1600) {
		length := len(f)
		if i%4 == 1 {
			length += 100 // as if cut by a snapshot length
		}
		ts := t0.Add(time.Duration(i)*1234567*time.Nanosecond + time.Duration(i*i)*time.Second)
		out = append(out, pkt{f, PacketInfo{Timestamp: ts, CaptureLength: len(f), Length: length}})
	}
	return out
}

func truncTime(ts time.Time, nano bool) time.Time {
	if nano {
		return ts
	}
	return ts.Truncate(time.Microsecond)
}

func checkPackets(t *testing.T, got, want []pkt, nano bool, linkType layers.LinkType) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d packets, want %d", len(got), len(want))
	}
	for i := range want {
		g, w := got[i], want[i]
		if !bytes.Equal(g.data, w.data) {
			t.Fatalf("packet %d: data differs", i+1)
		}
		if !g.info.Timestamp.Equal(truncTime(w.info.Timestamp, nano)) {
			t.Fatalf("packet %d: time %v, want %v", i+1, g.info.Timestamp, truncTime(w.info.Timestamp, nano))
		}
		if g.info.Length != w.info.Length || g.info.CaptureLength != len(w.data) || g.info.LinkType != linkType {
			t.Fatalf("packet %d: len %d cap %d lt %d, want %d %d %d", i+1,
				g.info.Length, g.info.CaptureLength, g.info.LinkType, w.info.Length, len(w.data), linkType)
		}
	}
}

// TestPcapRoundTrip: PcapWriter output must equal a hand-built file byte for
// byte, read back through our reader and pcapgo, in both precisions; and
// hand-built big-endian files must read the same.
func TestPcapRoundTrip(t *testing.T) {
	pkts := testPackets(1, 50)
	for _, tc := range []struct {
		name   string
		nano   bool
		bo     order
		format string
	}{
		{"us-little", false, binary.LittleEndian, "pcap"},
		{"ns-little", true, binary.LittleEndian, "pcap-ns"},
		{"us-big", false, binary.BigEndian, "pcap"},
		{"ns-big", true, binary.BigEndian, "pcap-ns"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			file := pcapBuild(tc.bo, tc.nano, uint32(layers.LinkType(247)), 65535, pkts)
			if tc.bo == binary.LittleEndian {
				var buf bytes.Buffer
				w, err := NewPcapWriter(&buf, layers.LinkType(247), 65535, tc.nano)
				if err != nil {
					t.Fatal(err)
				}
				for _, p := range pkts {
					if err := w.WritePacket(p.info, p.data); err != nil {
						t.Fatal(err)
					}
				}
				if !bytes.Equal(buf.Bytes(), file) {
					t.Fatal("PcapWriter output differs from the hand-built file")
				}
			}
			r, err := NewReader(bytes.NewReader(file))
			if err != nil {
				t.Fatal(err)
			}
			if r.Format() != tc.format {
				t.Errorf("Format() = %q, want %q", r.Format(), tc.format)
			}
			got, err := readAll(t, r)
			if err != nil {
				t.Fatal(err)
			}
			checkPackets(t, got, pkts, tc.nano, layers.LinkType(247))

			// pcapgo as the oracle.
			pr, err := pcapgo.NewReader(bytes.NewReader(file))
			if err != nil {
				t.Fatal(err)
			}
			for i := range pkts {
				data, ci, err := pr.ReadPacketData()
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(data, got[i].data) || !ci.Timestamp.Equal(got[i].info.Timestamp) || ci.Length != got[i].info.Length {
					t.Fatalf("packet %d: pcapgo disagrees", i+1)
				}
			}
			if _, _, err := pr.ReadPacketData(); err != io.EOF {
				t.Fatalf("pcapgo has extra data: %v", err)
			}
		})
	}
}

// TestPcapgoWritesWeRead: files written by pcapgo (pcap µs/ns, pcapng with
// several interfaces) read back identically.
func TestPcapgoWritesWeRead(t *testing.T) {
	pkts := testPackets(2, 40)
	for _, nano := range []bool{false, true} {
		var buf bytes.Buffer
		var w *pcapgo.Writer
		if nano {
			w = pcapgo.NewWriterNanos(&buf)
		} else {
			w = pcapgo.NewWriter(&buf)
		}
		if err := w.WriteFileHeader(65536, layers.LinkTypeLinuxSLL); err != nil {
			t.Fatal(err)
		}
		for _, p := range pkts {
			ci := gopacket.CaptureInfo{Timestamp: p.info.Timestamp, CaptureLength: len(p.data), Length: p.info.Length}
			if err := w.WritePacket(ci, p.data); err != nil {
				t.Fatal(err)
			}
		}
		got, err := readBytes(t, buf.Bytes())
		if err != nil {
			t.Fatal(err)
		}
		checkPackets(t, got, pkts, nano, layers.LinkTypeLinuxSLL)
	}

	// pcapng: three interfaces, different link types.
	var buf bytes.Buffer
	nw, err := pcapgo.NewNgWriterInterface(&buf, pcapgo.NgInterface{
		Name: "eth0", LinkType: layers.LinkTypeEthernet, SnapLength: 0, TimestampResolution: 9,
	}, pcapgo.DefaultNgWriterOptions)
	if err != nil {
		t.Fatal(err)
	}
	for _, intf := range []pcapgo.NgInterface{
		{Name: "ib0", LinkType: layers.LinkType(layers.LinkType(247)), TimestampResolution: 9},
		{Name: "any", LinkType: layers.LinkTypeLinuxSLL2, TimestampResolution: 9},
	} {
		if _, err := nw.AddInterface(intf); err != nil {
			t.Fatal(err)
		}
	}
	links := []layers.LinkType{layers.LinkTypeEthernet, layers.LinkType(247), layers.LinkTypeLinuxSLL2}
	for i, p := range pkts {
		ci := gopacket.CaptureInfo{Timestamp: p.info.Timestamp, CaptureLength: len(p.data), Length: p.info.Length, InterfaceIndex: i % 3}
		if err := nw.WritePacket(ci, p.data); err != nil {
			t.Fatal(err)
		}
	}
	if err := nw.Flush(); err != nil {
		t.Fatal(err)
	}
	got, err := readBytes(t, buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(pkts) {
		t.Fatalf("got %d packets", len(got))
	}
	for i, g := range got {
		if g.info.InterfaceIndex != i%3 || g.info.LinkType != links[i%3] {
			t.Fatalf("packet %d: interface %d link type %d", i+1, g.info.InterfaceIndex, g.info.LinkType)
		}
		g.info.LinkType = 0
		got[i] = g
	}
	checkPackets(t, got, pkts, true, 0)
}

// TestPcapngWriterRoundTrip: our pcapng writer with three interfaces of
// different link types, snapshot lengths and resolutions, read back by us
// and by pcapgo.
func TestPcapngWriterRoundTrip(t *testing.T) {
	pkts := testPackets(3, 60)
	var buf bytes.Buffer
	w, err := NewPcapngWriter(&buf)
	if err != nil {
		t.Fatal(err)
	}
	ifaces := []struct {
		lt   layers.LinkType
		snap int
		name string
		nano bool
	}{
		{layers.LinkTypeEthernet, 0, "eth0", false},
		{layers.LinkType(247), 0, "ib0", true},
		{layers.LinkTypeRaw, 200, "", false},
	}
	for i, f := range ifaces {
		id, err := w.AddInterface(f.lt, f.snap, f.name, f.nano)
		if err != nil || id != i {
			t.Fatalf("AddInterface = %d, %v", id, err)
		}
	}
	want := make([]pkt, len(pkts))
	for i, p := range pkts {
		p.info.InterfaceIndex = i % 3
		if err := w.WritePacket(p.info, p.data); err != nil {
			t.Fatal(err)
		}
		f := ifaces[i%3]
		if f.snap > 0 && len(p.data) > f.snap {
			p.data = p.data[:f.snap]
		}
		p.info.Timestamp = truncTime(p.info.Timestamp, f.nano)
		p.info.LinkType = f.lt
		want[i] = p
	}
	if err := w.WritePacket(PacketInfo{InterfaceIndex: 3}, nil); err == nil {
		t.Error("writing to interface 3 of 3 succeeded")
	}
	file := buf.Bytes()

	got, err := readBytes(t, file)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("got %d packets, want %d", len(got), len(want))
	}
	for i := range want {
		g, w := got[i].info, want[i].info
		if !bytes.Equal(got[i].data, want[i].data) || !g.Timestamp.Equal(w.Timestamp) ||
			g.Length != w.Length || g.LinkType != w.LinkType || g.InterfaceIndex != w.InterfaceIndex {
			t.Fatalf("packet %d: got %+v, want %+v", i+1, g, w)
		}
	}

	nr, err := pcapgo.NewNgReader(bytes.NewReader(file), pcapgo.NgReaderOptions{WantMixedLinkType: true})
	if err != nil {
		t.Fatal(err)
	}
	for i := range want {
		data, ci, err := nr.ReadPacketData()
		if err != nil {
			t.Fatalf("pcapgo packet %d: %v", i+1, err)
		}
		if !bytes.Equal(data, want[i].data) || !ci.Timestamp.Equal(want[i].info.Timestamp) ||
			ci.Length != want[i].info.Length || ci.InterfaceIndex != want[i].info.InterfaceIndex {
			t.Fatalf("pcapgo packet %d: %+v", i+1, ci)
		}
		if intf, _ := nr.Interface(ci.InterfaceIndex); intf.LinkType != want[i].info.LinkType {
			t.Fatalf("pcapgo packet %d: link type %d", i+1, intf.LinkType)
		}
	}
	if _, _, err := nr.ReadPacketData(); err != io.EOF {
		t.Fatalf("pcapgo: extra data: %v", err)
	}
}

// TestPcapngHandBuilt covers what writers rarely produce: several sections
// in different byte orders, each resetting the interfaces; SPB and OPB;
// skipped blocks; if_tsresol in powers of 10 and 2; if_tsoffset.
func TestPcapngHandBuilt(t *testing.T) {
	fr := frames(4, 12, 300)
	g := &ngBuild{}
	type want struct {
		data   []byte
		ts     time.Time
		length int
		iface  int
		lt     layers.LinkType
	}
	var wants []want
	sec := uint64(t0.Unix())

	// Section 1, little-endian: default µs, 10^-3 with an offset, 2^-20.
	g.shb(binary.LittleEndian)
	g.idb(layers.LinkTypeEthernet, 0, -1, 0)
	g.idb(layers.LinkType(247), 0, 3, 3600)
	g.idb(layers.LinkTypeRaw, 0, 0x80|20, 0)
	g.block(4, []byte{0, 0, 0, 0})                    // NRB, empty
	g.epb(0, sec*1e6+123456, len(fr[0])+10, fr[0])    // µs
	g.epb(1, sec*1e3+789, len(fr[1]), fr[1])          // ms + 1 h
	g.epb(2, sec<<20|(1<<19), len(fr[2]), fr[2])      // half a second in 2^-20
	g.block(5, make([]byte, 12))                      // ISB
	g.opb(1, sec*1e3+1, len(fr[3]), fr[3])            // obsolete packet block
	g.block(0x0A, []byte{1, 2, 3, 4, 0, 0, 0, 0})     // DSB
	g.block(0x40000BAD, []byte{0, 0, 0x7e, 0x7e, 42}) // custom, padded
	g.block(0x12345678, []byte{1})                    // unknown
	wants = append(wants,
		want{fr[0], time.Unix(int64(sec), 123456000), len(fr[0]) + 10, 0, layers.LinkTypeEthernet},
		want{fr[1], time.Unix(int64(sec)+3600, 789e6), len(fr[1]), 1, layers.LinkType(247)},
		want{fr[2], time.Unix(int64(sec), 5e8), len(fr[2]), 2, layers.LinkTypeRaw},
		want{fr[3], time.Unix(int64(sec)+3600, 1e6), len(fr[3]), 1, layers.LinkType(247)},
	)

	// Section 2, big-endian: interfaces are reset; SPB with a snaplen.
	g.shb(binary.BigEndian)
	g.idb(layers.LinkTypeLinuxSLL2, 100, 9, 0)
	g.idb(layers.LinkTypeEthernet, 0, 0x80|30, -10)
	g.epb(0, sec*1e9+999999999, len(fr[4]), fr[4])
	g.spb(len(fr[5]), fr[5]) // captured = min(snaplen 100, orig, room)
	g.epb(1, sec<<30|(3<<28), len(fr[6]), fr[6])
	capSPB := min(100, len(fr[5]))
	wants = append(wants,
		want{fr[4], time.Unix(int64(sec), 999999999), len(fr[4]), 0, layers.LinkTypeLinuxSLL2},
		want{fr[5][:capSPB], time.Time{}, len(fr[5]), 0, layers.LinkTypeLinuxSLL2},
		want{fr[6], time.Unix(int64(sec)-10, 750000000), len(fr[6]), 1, layers.LinkTypeEthernet},
	)

	// Section 3, little-endian again: an SPB whose original length is
	// smaller than its data, and 10^-12 resolution.
	g.shb(binary.LittleEndian)
	g.idb(layers.LinkType(247), 0, 12, 0)
	g.spb(20, fr[7])
	g.epb(0, 1e6*1e12+5e11+1999, len(fr[8]), fr[8]) // 10^-12 s units overflow 64 bits after 213 days
	wants = append(wants,
		want{fr[7][:20], time.Time{}, 20, 0, layers.LinkType(247)},
		want{fr[8], time.Unix(1e6, 5e8+1), len(fr[8]), 0, layers.LinkType(247)},
	)

	for _, src := range []struct {
		name string
		r    func() io.Reader
	}{
		{"bytes", func() io.Reader { return bytes.NewReader(g.buf) }},
		{"stream", func() io.Reader { return noSeek{bytes.NewReader(g.buf)} }},
	} {
		t.Run(src.name, func(t *testing.T) {
			r, err := NewReader(src.r())
			if err != nil {
				t.Fatal(err)
			}
			got, err := readAll(t, r)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(wants) {
				t.Fatalf("got %d packets, want %d", len(got), len(wants))
			}
			for i, w := range wants {
				g := got[i]
				if !bytes.Equal(g.data, w.data) || !g.info.Timestamp.Equal(w.ts) || g.info.Length != w.length ||
					g.info.InterfaceIndex != w.iface || g.info.LinkType != w.lt {
					t.Errorf("packet %d: got ts %v len %d cap %d if %d lt %d; want ts %v len %d cap %d if %d lt %d",
						i+1, g.info.Timestamp, g.info.Length, len(g.data), g.info.InterfaceIndex, g.info.LinkType,
						w.ts, w.length, len(w.data), w.iface, w.lt)
				}
			}
		})
	}

	// pcapgo agrees on the decimal-resolution parts (its binary-resolution
	// arithmetic is approximate, so section 1 packet 3 and section 2 packet
	// 3 are checked on data only).
	nr, err := pcapgo.NewNgReader(bytes.NewReader(g.buf), pcapgo.NgReaderOptions{WantMixedLinkType: true})
	if err != nil {
		t.Fatal(err)
	}
	for i, w := range wants {
		data, ci, err := nr.ReadPacketData()
		if err != nil {
			t.Fatalf("pcapgo packet %d: %v", i+1, err)
		}
		if !bytes.Equal(data, w.data) || ci.Length != w.length || ci.InterfaceIndex != w.iface {
			t.Errorf("pcapgo packet %d: data or lengths differ (len %d if %d)", i+1, ci.Length, ci.InterfaceIndex)
		}
		if i != 2 && i != 6 && !ci.Timestamp.Equal(w.ts) && !(w.ts.IsZero() && ci.Timestamp.IsZero()) {
			t.Errorf("pcapgo packet %d: time %v, ours %v", i+1, ci.Timestamp, w.ts)
		}
	}
}

// TestERFRoundTrip writes ERF records (with and without extension headers,
// Ethernet and InfiniBand types, a PAD record) and reads them back whole.
func TestERFRoundTrip(t *testing.T) {
	var buf bytes.Buffer
	w := NewERFWriter(&buf)
	var recs [][]byte
	var times []time.Time
	for i, f := range frames(5, 30, 1500) {
		ts := t0.Add(time.Duration(i) * 1234567891 * time.Nanosecond)
		typ := byte(erfTypeETH)
		if i%2 == 1 {
			typ = 21 // ERF_TYPE_INFINIBAND: no subheader
		}
		rec := erfRecord(ts, f, i%4, typ)
		if err := w.WriteRecord(rec); err != nil {
			t.Fatal(err)
		}
		recs, times = append(recs, rec), append(times, ts)
		if i == 3 {
			if err := w.WriteRecord(erfRecord(ts, make([]byte, 40), 0, erfTypePad)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := w.WriteRecord(make([]byte, 10)); err == nil {
		t.Error("WriteRecord accepted a 10-byte record")
	}
	if err := w.WriteRecord(make([]byte, 20)); err == nil {
		t.Error("WriteRecord accepted a record whose rlen is 0")
	}
	for _, format := range []string{"", "erf"} {
		r, err := NewReaderFormat(bytes.NewReader(buf.Bytes()), format)
		if err != nil {
			t.Fatal(err)
		}
		if r.Format() != "erf" {
			t.Fatalf("Format() = %q", r.Format())
		}
		got, err := readAll(t, r)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(recs) {
			t.Fatalf("got %d records, want %d (PAD skipped)", len(got), len(recs))
		}
		for i, g := range got {
			hl := erfHeaderLength(recs[i])
			wlen := int(binary.BigEndian.Uint16(recs[i][14:]))
			if !bytes.Equal(g.data, recs[i]) || g.info.Length != wlen+hl || g.info.LinkType != linkTypeERF ||
				!g.info.Timestamp.Equal(times[i]) || g.info.InterfaceIndex != 0 {
				t.Fatalf("record %d: %+v (want ts %v len %d)", i+1, g.info, times[i], wlen+hl)
			}
		}
	}
}

// TestERFTime checks the 32.32 fixed-point conversion both ways.
func TestERFTime(t *testing.T) {
	for _, ts := range []time.Time{t0, time.Unix(0, 0), time.Unix(1<<31, 999999999), time.Unix(1700000000, 1)} {
		if got := erfTime(ERFTimestamp(ts)); !got.Equal(ts) {
			t.Errorf("%v -> %v", ts, got)
		}
	}
	// Half a second exactly, and the largest fraction rounding up to the
	// next second.
	if got := erfTime(5<<32 | 1<<31); !got.Equal(time.Unix(5, 5e8)) {
		t.Errorf("5.5 s decoded as %v", got)
	}
	if got := erfTime(5<<32 | 0xffffffff); !got.Equal(time.Unix(6, 0)) {
		t.Errorf("5.99999999977 s decoded as %v", got)
	}
}

// TestWriterEdgeCases checks the writers cut to the snapshot length and
// refuse what they cannot write.
func TestWriterEdgeCases(t *testing.T) {
	pw, err := NewPcapWriter(io.Discard, 1, 0, false)
	if err != nil {
		t.Fatal(err)
	}
	if err := pw.WritePacket(PacketInfo{Timestamp: time.Unix(-5, 0)}, []byte{1}); err == nil {
		t.Error("pcap: timestamp before 1970 accepted")
	}
	if err := pw.WritePacket(PacketInfo{Length: 3}, []byte{1, 2, 3, 4}); err == nil {
		t.Error("pcap: Length < len(data) accepted")
	}
	var buf bytes.Buffer
	pw2, _ := NewPcapWriter(&buf, 1, 100, false)
	if err := pw2.WritePacket(PacketInfo{}, make([]byte, 300)); err != nil {
		t.Fatal(err)
	}
	got, err := readBytes(t, buf.Bytes())
	if err != nil || len(got) != 1 || len(got[0].data) != 100 || got[0].info.Length != 300 {
		t.Errorf("pcap: 300-byte packet with snaplen 100 read back as %+v, %v", got, err)
	}
	if _, err := NewPcapWriter(io.Discard, 1, maxRecordSize+1, false); err == nil {
		t.Error("pcap: snaplen over the limit accepted")
	}
	nw, err := NewPcapngWriter(io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if err := nw.WritePacket(PacketInfo{}, []byte{1}); err == nil {
		t.Error("pcapng: packet without interface accepted")
	}
}

// TestLargeRecords: records bigger than the 256 KiB buffer grow it, from a
// file and from a stream of short reads.
func TestLargeRecords(t *testing.T) {
	big := frames(40, 3, 100)
	big[1] = bytes.Repeat([]byte{0xab, 0xcd, 0xef}, 1<<20) // 3 MiB
	var pc, ng bytes.Buffer
	pw, err := NewPcapWriter(&pc, layers.LinkTypeEthernet, 8<<20, false)
	if err != nil {
		t.Fatal(err)
	}
	nw, _ := NewPcapngWriter(&ng)
	nw.AddInterface(layers.LinkTypeEthernet, 0, "", false)
	for _, f := range big {
		pw.WritePacket(PacketInfo{Timestamp: t0}, f)
		nw.WritePacket(PacketInfo{Timestamp: t0}, f)
	}
	dir := t.TempDir()
	for name, file := range map[string][]byte{"pcap": pc.Bytes(), "pcapng": ng.Bytes()} {
		path := filepath.Join(dir, name)
		os.WriteFile(path, file, 0o644)
		f, _ := os.Open(path)
		defer f.Close()
		fr, err := Open(path)
		if err != nil {
			t.Fatal(err)
		}
		sr, err := NewReader(iotest.HalfReader(noSeek{f}))
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range []*Reader{fr, sr} {
			got, err := readAll(t, r)
			if err != nil || len(got) != 3 {
				t.Fatalf("%s: %d packets, %v", name, len(got), err)
			}
			for i := range big {
				if !bytes.Equal(got[i].data, big[i]) {
					t.Fatalf("%s: packet %d differs", name, i+1)
				}
			}
			r.Close()
		}
	}
}

// TestOpenStdin: "-" reads standard input, and Close leaves it open.
func TestOpenStdin(t *testing.T) {
	path := filepath.Join(t.TempDir(), "in.pcap")
	pkts := testPackets(41, 5)
	os.WriteFile(path, pcapBuild(binary.LittleEndian, true, 1, 0, pkts), 0o644)
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	saved := os.Stdin
	os.Stdin = f
	defer func() { os.Stdin = saved }()
	r, err := Open("-")
	if err != nil {
		t.Fatal(err)
	}
	got, err := readAll(t, r)
	if err != nil {
		t.Fatal(err)
	}
	checkPackets(t, got, pkts, true, 1)
	if r.Size() != -1 {
		t.Errorf("Size() = %d for standard input", r.Size())
	}
	r.Close()
	if _, err := f.Stat(); err != nil {
		t.Errorf("Close closed standard input: %v", err)
	}
}

// TestDataOffset: every packet read again at DataOffset is the same bytes,
// in every format of testdata.
func TestDataOffset(t *testing.T) {
	files, _ := filepath.Glob("../testdata/*/*.pcap*")
	erf, _ := filepath.Glob("../testdata/*/*.erf")
	files = append(files, erf...)
	if len(files) < 20 {
		t.Fatalf("found %d captures", len(files))
	}
	for _, path := range files {
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		r, err := Open(path)
		if err != nil {
			t.Fatal(err)
		}
		for n := 1; ; n++ {
			data, _, err := r.Next()
			if err != nil {
				break
			}
			off := r.DataOffset(data)
			if off < 0 || off+int64(len(data)) > int64(len(raw)) || !bytes.Equal(raw[off:off+int64(len(data))], data) {
				t.Errorf("%s packet %d: DataOffset %d does not hold its bytes", path, n, off)
				break
			}
		}
		r.Close()
	}
}
