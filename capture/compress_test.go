package capture

import (
	"bytes"
	"compress/gzip"
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
