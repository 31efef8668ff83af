package capture

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/gopacket/gopacket/layers"
)

// built is a capture file with the layout of its blocks.
type built struct {
	name   string
	format string // forced format for NewReaderFormat ("" = detect)
	file   []byte
	blocks []blk
}

func builtPcap(bo order, nano bool) built {
	pkts := testPackets(10, 12)
	file := pcapBuild(bo, nano, 1, 262144, pkts)
	b := built{name: "pcap", file: file, blocks: []blk{{0, 24, false}}}
	off := 24
	for _, p := range pkts {
		b.blocks = append(b.blocks, blk{off, off + 16 + len(p.data), true})
		off += 16 + len(p.data)
	}
	return b
}

func builtPcapng() built {
	fr := frames(11, 10, 200)
	g := &ngBuild{}
	g.shb(binary.LittleEndian)
	g.idb(layers.LinkTypeEthernet, 0, -1, 0)
	g.epb(0, 1e15, len(fr[0]), fr[0])
	g.block(5, make([]byte, 12))
	g.idb(layers.LinkType(247), 0, 9, 0)
	g.epb(1, 2e18, len(fr[1]), fr[1])
	g.spb(len(fr[2]), fr[2])
	g.opb(1, 3e18, len(fr[3]), fr[3])
	g.shb(binary.BigEndian)
	g.idb(layers.LinkTypeRaw, 0, 0x80|10, 0)
	g.epb(0, 1<<40, len(fr[4]), fr[4])
	g.block(4, []byte{0, 0, 0, 0})
	g.epb(0, 1<<41, len(fr[5]), fr[5])
	return built{name: "pcapng", file: g.buf, blocks: g.blocks}
}

func builtERF() built {
	b := built{name: "erf", format: "erf"}
	for i, f := range frames(12, 10, 300) {
		typ := byte(erfTypeETH)
		if i == 4 {
			typ = erfTypePad
		}
		rec := erfRecord(t0, f, i%3, typ)
		b.blocks = append(b.blocks, blk{len(b.file), len(b.file) + len(rec), typ != erfTypePad})
		b.file = append(b.file, rec...)
	}
	return b
}

// TestTruncateEverywhere cuts each file at every byte offset and checks the
// reader returns exactly the complete packets before the cut, then io.EOF at
// a block boundary or a truncation FormatError naming the cut record.
func TestTruncateEverywhere(t *testing.T) {
	cases := []built{builtPcap(binary.LittleEndian, false), builtPcap(binary.BigEndian, true), builtPcapng(), builtERF()}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			full, err := func() ([]pkt, error) {
				r, err := NewReaderFormat(bytes.NewReader(c.file), c.format)
				if err != nil {
					return nil, err
				}
				return readAll(t, r)
			}()
			if err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			for cut := 0; cut <= len(c.file); cut++ {
				// Most cuts through bytes.Reader; some through a one-byte
				// stream and some through a mapped file.
				var src io.Reader = bytes.NewReader(c.file[:cut])
				var r *Reader
				var err error
				switch cut % 5 {
				case 1:
					src = iotest.OneByteReader(noSeek{src})
				case 2:
					src = iotest.DataErrReader(noSeek{src})
				}
				if cut%7 == 3 {
					path := filepath.Join(dir, "cut")
					if err := os.WriteFile(path, c.file[:cut], 0o644); err != nil {
						t.Fatal(err)
					}
					r, err = OpenFormat(path, c.format)
				} else {
					r, err = NewReaderFormat(src, c.format)
				}
				checkCut(t, c, full, cut, r, err)
			}
		})
	}
}

func checkCut(t *testing.T, c built, full []pkt, cut int, r *Reader, err error) {
	t.Helper()
	// Where the cut falls.
	complete, inside := 0, -1
	for i, b := range c.blocks {
		if b.end <= cut && b.packet {
			complete++
		}
		if b.start < cut && cut < b.end {
			inside = i
		}
	}
	if err != nil {
		// Only a cut inside the file header may fail at open.
		var fe *FormatError
		switch {
		case cut < 4 && errors.Is(err, ErrUnknownFormat):
		case errors.As(err, &fe) && fe.Truncated && fe.Packet == 1 && fe.Offset == 0 && inside == 0:
		default:
			t.Fatalf("cut %d: open: %v", cut, err)
		}
		return
	}
	defer r.Close()
	got, err := readAll(t, r)
	if len(got) != complete {
		t.Fatalf("cut %d: read %d packets, want %d (err %v)", cut, len(got), complete, err)
	}
	for i := range got {
		if !bytes.Equal(got[i].data, full[i].data) || got[i].info != full[i].info {
			t.Fatalf("cut %d: packet %d differs from the uncut read", cut, i+1)
		}
	}
	if inside < 0 {
		if err != nil {
			t.Fatalf("cut %d at a block boundary: %v", cut, err)
		}
		return
	}
	var fe *FormatError
	if !errors.As(err, &fe) {
		t.Fatalf("cut %d inside block %d: error %v is not a *FormatError", cut, inside, err)
	}
	if !fe.Truncated || !errors.Is(err, io.ErrUnexpectedEOF) || fe.Packet != complete+1 || fe.Offset != int64(c.blocks[inside].start) {
		t.Fatalf("cut %d: got %+v, want truncated packet %d at offset %d", cut, fe, complete+1, c.blocks[inside].start)
	}
	if !strings.Contains(err.Error(), "file ends inside packet") {
		t.Fatalf("cut %d: message %q", cut, err)
	}
	// Sticky.
	if _, _, err2 := r.Next(); err2 != err {
		t.Fatalf("cut %d: second Next returned %v", cut, err2)
	}
}

// TestCorruptRecords damages one record in the middle of a valid file and
// checks the error names that record and everything before it was read.
func TestCorruptRecords(t *testing.T) {
	le, be := binary.LittleEndian, binary.BigEndian
	type corruption struct {
		name   string
		base   func() built
		block  int                    // index into blocks of the damaged record
		damage func(b []byte, at int) // at = offset of the damaged block
		reason string                 // substring of the reason
	}
	pcapLE := func() built { return builtPcap(le, false) }
	pcapBE := func() built { return builtPcap(be, true) }
	ng := builtPcapng
	// Block indexes in builtPcapng: 0 SHB, 1 IDB, 2 EPB, 3 ISB, 4 IDB,
	// 5 EPB, 6 SPB, 7 OPB, 8 SHB(BE), 9 IDB, 10 EPB, 11 NRB, 12 EPB.
	cases := []corruption{
		{"pcap caplen huge", pcapLE, 5, func(b []byte, at int) { le.PutUint32(b[at+8:], 99999999) },
			"record says 99999999 bytes captured but the snapshot length is 262144"},
		{"pcap-ns big-endian caplen huge", pcapBE, 3, func(b []byte, at int) { be.PutUint32(b[at+8:], 0xffffffff) },
			"4294967295 bytes captured"},
		{"pcapng length not multiple of 4", ng, 5, func(b []byte, at int) { le.PutUint32(b[at+4:], le.Uint32(b[at+4:])+2) },
			"not a multiple of 4"},
		{"pcapng length below 12", ng, 3, func(b []byte, at int) { le.PutUint32(b[at+4:], 8) },
			"less than the minimum"},
		{"pcapng trailer mismatch", ng, 2, func(b []byte, at int) {
			n := int(le.Uint32(b[at+4:]))
			le.PutUint32(b[at+n-4:], uint32(n+4))
		}, "does not match"},
		{"pcapng huge block", ng, 6, func(b []byte, at int) { le.PutUint32(b[at+4:], 0x7ffffff0) },
			"more than the 256 MiB limit"},
		{"pcapng unknown interface", ng, 5, func(b []byte, at int) { le.PutUint32(b[at+8:], 2) },
			"interface 2 but its section declares only 2"},
		{"pcapng OPB unknown interface", ng, 7, func(b []byte, at int) { le.PutUint16(b[at+8:], 7) },
			"interface 7"},
		{"pcapng interface of previous section", ng, 10, func(b []byte, at int) { be.PutUint32(b[at+8:], 1) },
			"interface 1 but its section declares only 1"},
		{"pcapng caplen beyond block", ng, 12, func(b []byte, at int) { be.PutUint32(b[at+20:], 5000) },
			"says 5000 bytes captured but the block only has room for"},
		{"pcapng second SHB bad byte order", ng, 8, func(b []byte, at int) { copy(b[at+8:], "\x1a\x2b\x3c\x3d") },
			"byte-order magic"},
		{"pcapng version 2", ng, 8, func(b []byte, at int) { be.PutUint16(b[at+12:], 2) },
			"version 2.0 is not supported"},
		{"pcapng tsresol too fine", ng, 4, func(b []byte, at int) {
			i := bytes.Index(b[at:], []byte{9, 0, 1, 0, 9})
			b[at+i+4] = 25
		}, "10^-25"},
		{"erf rlen below header", builtERF, 6, func(b []byte, at int) { be.PutUint16(b[at+10:], 15) },
			"less than its 16-byte header"},
		{"erf extension headers past rlen", builtERF, 7, func(b []byte, at int) {
			b[at+8] |= 0x80
			be.PutUint16(b[at+10:], 16)
		}, "too short for its extension headers"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := c.base()
			good, err := readBytesFormat(t, b.file, b.format)
			if err != nil {
				t.Fatal(err)
			}
			file := append([]byte(nil), b.file...)
			at := b.blocks[c.block].start
			c.damage(file, at)
			want := 0 // packets before the damaged block
			for _, bl := range b.blocks[:c.block] {
				if bl.packet {
					want++
				}
			}
			for _, stream := range []bool{false, true} {
				var src io.Reader = bytes.NewReader(file)
				if stream {
					src = iotest.HalfReader(noSeek{src})
				}
				r, err := NewReaderFormat(src, b.format)
				if err != nil {
					t.Fatal(err)
				}
				r.name = "x.pcap"
				got, err := readAll(t, r)
				var fe *FormatError
				if !errors.As(err, &fe) {
					t.Fatalf("error %v is not a *FormatError", err)
				}
				if fe.Packet != want+1 || fe.Offset != int64(at) || fe.Truncated || !strings.Contains(fe.Reason, c.reason) {
					t.Fatalf("got %+v; want packet %d at offset %d, reason containing %q", fe, want+1, at, c.reason)
				}
				if len(got) != want {
					t.Fatalf("read %d packets before the error, want %d", len(got), want)
				}
				for i := range got {
					if !bytes.Equal(got[i].data, good[i].data) || got[i].info != good[i].info {
						t.Fatalf("packet %d before the damage differs", i+1)
					}
				}
			}
		})
	}
}

func readBytesFormat(t *testing.T, b []byte, format string) ([]pkt, error) {
	t.Helper()
	r, err := NewReaderFormat(bytes.NewReader(b), format)
	if err != nil {
		return nil, err
	}
	return readAll(t, r)
}

// TestFormatErrorMessage pins the wording users see.
func TestFormatErrorMessage(t *testing.T) {
	e := &FormatError{File: "x.pcap", Packet: 17, Offset: 12345,
		Reason: "record says 99999999 bytes captured but the snapshot length is 262144"}
	want := `corrupt capture "x.pcap": packet 17 at byte offset 12345: record says 99999999 bytes captured but the snapshot length is 262144; the packets before it were read; the rest of the file cannot be trusted (try editcap or pcapfix to salvage it)`
	if e.Error() != want {
		t.Errorf("got  %s\nwant %s", e.Error(), want)
	}
	e = &FormatError{File: "y.pcap", Packet: 3, Offset: 100, Truncated: true, Reason: "the record needs 80 bytes, only 20 remain"}
	want = `truncated capture "y.pcap": file ends inside packet 3 at byte offset 100: the record needs 80 bytes, only 20 remain; the 2 packets before it were read (the capture or its download was probably cut short)`
	if e.Error() != want {
		t.Errorf("got  %s\nwant %s", e.Error(), want)
	}
	if !errors.Is(e, io.ErrUnexpectedEOF) {
		t.Error("a truncation is not io.ErrUnexpectedEOF")
	}
}

// TestStickyEOF: after io.EOF, Next keeps returning io.EOF; after Close it
// returns an error.
func TestStickyEOF(t *testing.T) {
	b := builtPcap(binary.LittleEndian, false)
	r, err := NewReader(bytes.NewReader(b.file))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := readAll(t, r); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if _, _, err := r.Next(); err != io.EOF {
			t.Fatalf("Next after EOF: %v", err)
		}
	}
	r2, _ := NewReader(bytes.NewReader(b.file))
	r2.Close()
	if _, _, err := r2.Next(); err == nil {
		t.Fatal("Next after Close succeeded")
	}
}

// TestReadError: an I/O error from the source is returned as is (wrapped),
// not as a FormatError, after the packets read before it.
func TestReadError(t *testing.T) {
	b := builtPcap(binary.LittleEndian, false)
	boom := errors.New("boom")
	half := len(b.file) / 2
	src := io.MultiReader(bytes.NewReader(b.file[:half]), iotest.ErrReader(boom))
	r, err := NewReader(src)
	if err != nil {
		t.Fatal(err)
	}
	got, err := readAll(t, r)
	var fe *FormatError
	if !errors.Is(err, boom) || errors.As(err, &fe) {
		t.Fatalf("got %v", err)
	}
	if len(got) == 0 {
		t.Fatal("no packets before the read error")
	}
}
