package capture

import (
	"bytes"
	"encoding/binary"
	"io"
	"testing"
	"testing/iotest"
	"unsafe"
)

// TestKeepBuffers: with KeepBuffers, every packet returned stays intact
// until its buffer is handed back, in every format, whether the input
// comes a byte at a time (a swap before nearly every record) or at once.
func TestKeepBuffers(t *testing.T) {
	for _, c := range []built{builtPcap(binary.LittleEndian, false), builtPcap(binary.BigEndian, true), builtPcapng(), builtERF()} {
		want, err := readBytesFormat(t, c.file, c.format)
		if err != nil || len(want) == 0 {
			t.Fatalf("%s: %d packets, %v", c.name, len(want), err)
		}
		for _, oneByte := range []bool{false, true} {
			var src = noSeek{bytes.NewReader(c.file)}
			if oneByte {
				src = noSeek{iotest.OneByteReader(bytes.NewReader(c.file))}
			}
			r, err := NewReaderFormat(src, c.format)
			if err != nil {
				t.Fatal(err)
			}
			swaps := 0
			r.KeepBuffers(func(old []byte) []byte {
				swaps++
				return make([]byte, len(old)/2) // too short: the reader grows it
			})
			var kept [][]byte
			for {
				data, _, err := r.Next()
				if err != nil {
					break
				}
				kept = append(kept, data)
			}
			if len(kept) != len(want) {
				t.Fatalf("%s: %d packets, want %d", c.name, len(kept), len(want))
			}
			for i := range kept {
				if !bytes.Equal(kept[i], want[i].data) {
					t.Fatalf("%s (one byte at a time %v): packet %d changed after later reads", c.name, oneByte, i+1)
				}
			}
			if oneByte && swaps == 0 {
				t.Errorf("%s: no swap", c.name)
			}
		}
	}
}

// TestNextBuffered: when NextBuffered says the next record is in the
// buffer, the next Next neither moves the buffer nor changes the packet
// returned before (stream.Track holds it until the next is decoded), in
// every format, whether the input comes at once or in pieces of 1 to 399
// bytes (records cut anywhere at the end of the buffer). With the input
// at once it says so of some records of pcap and pcapng, never of ERF's,
// nor past the last.
func TestNextBuffered(t *testing.T) {
	for _, c := range []built{builtPcap(binary.LittleEndian, false), builtPcap(binary.BigEndian, true), builtPcapng(), builtERF()} {
		for piece := range 400 { // 0: at once
			var src = noSeek{bytes.NewReader(c.file)}
			if piece > 0 {
				src = noSeek{&pieceReader{bytes.NewReader(c.file), piece}}
			}
			r, err := NewReaderFormat(src, c.format)
			if err != nil {
				t.Fatal(err)
			}
			var prev, prevCopy []byte
			said, n := 0, 0
			for {
				buffered := r.NextBuffered()
				buf, base := unsafe.SliceData(r.buf), r.base
				data, _, err := r.Next()
				if err != nil {
					if buffered {
						t.Errorf("%s: NextBuffered before the end (%v)", c.name, err)
					}
					break
				}
				n++
				if buffered {
					said++
					if unsafe.SliceData(r.buf) != buf || r.base != base {
						t.Fatalf("%s (pieces of %d): reading packet %d, which NextBuffered said was in the buffer, moved the buffer", c.name, piece, n)
					}
					if !bytes.Equal(prev, prevCopy) {
						t.Fatalf("%s (pieces of %d): packet %d changed as packet %d was read, which NextBuffered said was in the buffer", c.name, piece, n-1, n)
					}
				}
				prev, prevCopy = data, bytes.Clone(data)
			}
			if wantSome := piece == 0 && c.format != "erf"; wantSome && said == 0 || c.format == "erf" && said > 0 {
				t.Errorf("%s (pieces of %d): NextBuffered true before %d of %d records", c.name, piece, said, n)
			}
		}
	}
}

// pieceReader reads at most n bytes at a time.
type pieceReader struct {
	r io.Reader
	n int
}

func (p *pieceReader) Read(b []byte) (int, error) { return p.r.Read(b[:min(len(b), p.n)]) }
