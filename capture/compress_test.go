package capture

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
)

// compressors write the three formats tshark reads compressed.
var compressors = map[string]func(w io.Writer) io.WriteCloser{
	"gzip": func(w io.Writer) io.WriteCloser { return gzip.NewWriter(w) },
	"zstd": func(w io.Writer) io.WriteCloser { z, _ := zstd.NewWriter(w); return z },
	"lz4":  func(w io.Writer) io.WriteCloser { return lz4.NewWriter(w) },
}

func compress(t *testing.T, kind string, data []byte) []byte {
	t.Helper()
	var b bytes.Buffer
	w := compressors[kind](&b)
	if _, err := w.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestCompressedCaptures: a gzip, zstd or LZ4 capture (pcap and pcapng,
// file and stream, whatever its name) reads as the same packets as the
// uncompressed one; one cut short names the packet and its offset in the
// decompressed data.
func TestCompressedCaptures(t *testing.T) {
	for _, src := range []string{"../testdata/rxe/read_atomic.pcap", "../testdata/synth/sll_sll2_raw.pcapng"} {
		raw, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		want := readFile(t, src)
		for kind := range compressors {
			t.Run(filepath.Base(src)+"."+kind, func(t *testing.T) {
				z := compress(t, kind, raw)
				path := filepath.Join(t.TempDir(), "capture") // no telling suffix
				if err := os.WriteFile(path, z, 0o644); err != nil {
					t.Fatal(err)
				}
				got := readFile(t, path)
				if len(got) != len(want) {
					t.Fatalf("%d packets, want %d", len(got), len(want))
				}
				for i := range got {
					if !bytes.Equal(got[i].data, want[i].data) || got[i].info != want[i].info {
						t.Fatalf("packet %d differs", i+1)
					}
				}
				r, err := NewReader(bytes.NewReader(z))
				if err != nil {
					t.Fatal(err)
				}
				if r.Compression() != kind {
					t.Errorf("Compression() = %q", r.Compression())
				}
				r.Close()

				// Cut inside the last record (of the decompressed data).
				cut := compress(t, kind, raw[:len(raw)-10])
				r, err = NewReader(bytes.NewReader(cut))
				if err != nil {
					t.Fatal(err)
				}
				n := 0
				for {
					_, _, err = r.Next()
					if err != nil {
						break
					}
					n++
				}
				var fe *FormatError
				if !errors.As(err, &fe) || !fe.Truncated || fe.Packet != len(want) || n != len(want)-1 ||
					!strings.Contains(err.Error(), "of the "+kind+"-decompressed data") {
					t.Errorf("cut short: %d packets, then %v", n, err)
				}
			})
		}
	}
}

type readPacket struct {
	data []byte
	info PacketInfo
}

func readFile(t *testing.T, path string) []readPacket {
	t.Helper()
	r, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var out []readPacket
	for {
		data, info, err := r.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, readPacket{bytes.Clone(data), info})
	}
}

// TestPcapngCorruptLengths (issue 18.7): a Simple Packet Block whose
// original length no packet has, and an option longer than its block,
// are a corrupt file (as tshark says), not packets read silently.
func TestPcapngCorruptLengths(t *testing.T) {
	blk := func(typ uint32, body []byte) []byte {
		for len(body)%4 != 0 {
			body = append(body, 0)
		}
		n := uint32(12 + len(body))
		b := binary.LittleEndian.AppendUint32(nil, typ)
		b = binary.LittleEndian.AppendUint32(b, n)
		b = append(b, body...)
		return binary.LittleEndian.AppendUint32(b, n)
	}
	shb := blk(0x0A0D0D0A, []byte{0x4d, 0x3c, 0x2b, 0x1a, 1, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff})
	idb := blk(1, []byte{1, 0, 0, 0, 0, 0, 0, 0})
	spb := func(orig uint32) []byte {
		return blk(3, append(binary.LittleEndian.AppendUint32(nil, orig), make([]byte, 60)...))
	}
	badOpt := blk(1, []byte{1, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0xff, 0xff, 'a', 'b', 'c', 'd', 0, 0, 0, 0})
	epb := func(opts []byte) []byte {
		b := []byte{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 60, 0, 0, 0, 60, 0, 0, 0}
		return blk(6, append(append(b, make([]byte, 60)...), opts...))
	}
	cases := []struct {
		name string
		file []byte
		want string // "" for a clean read
	}{
		{"SPB of 60 bytes", append(append(bytes.Clone(shb), idb...), spb(60)...), ""},
		{"SPB of 2^32-1 bytes", append(append(bytes.Clone(shb), idb...), spb(0xffffffff)...), "Simple Packet Block says the packet was 4294967295 bytes long"},
		{"IDB option of 65535 bytes", append(append(bytes.Clone(shb), badOpt...), spb(60)...), "option (code 2) of 65535 bytes"},
		{"EPB option of 65535 bytes", append(append(bytes.Clone(shb), idb...), epb([]byte{1, 0, 0xff, 0xff, 0, 0, 0, 0})...), "Enhanced Packet Block has an option (code 1) of 65535 bytes"},
		{"EPB with options", append(append(bytes.Clone(shb), idb...), epb([]byte{1, 0, 2, 0, 'h', 'i', 0, 0, 0, 0, 0, 0})...), ""},
	}
	for _, c := range cases {
		r, err := NewReader(bytes.NewReader(c.file))
		if err == nil {
			for {
				if _, _, err = r.Next(); err != nil {
					break
				}
			}
		}
		var fe *FormatError
		switch {
		case c.want == "" && err != io.EOF:
			t.Errorf("%s: %v, want a clean read", c.name, err)
		case c.want != "" && (!errors.As(err, &fe) || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: %v, want a corrupt file: %q", c.name, err, c.want)
		}
	}
}
