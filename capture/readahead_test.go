package capture

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
	"testing/iotest"
	"time"
)

// tinyAhead reads ahead in 61-byte buffers with 16 bytes of headroom, so
// that on small captures records straddle buffers, some tails fit the
// headroom and others do not (the reader grows a buffer of its own).
func tinyAhead(r *Reader) { r.readAhead(61, 16) }

// bigPcap is a pcap of a few MiB: many small and 1 KiB packets, with a
// 100 KiB one (longer than the headroom) and a 3 MiB one (longer than a
// buffer) among them.
func bigPcap() []byte {
	var pkts []pkt
	for i, f := range frames(21, 6000, 1100) {
		switch i {
		case 1000:
			f = bytes.Repeat([]byte{byte(i)}, 100<<10)
		case 3000:
			f = bytes.Repeat([]byte{0xab}, 3<<20)
		}
		pkts = append(pkts, pkt{f, PacketInfo{Timestamp: t0.Add(time.Duration(i) * time.Microsecond), CaptureLength: len(f), Length: len(f)}})
	}
	return pcapBuild(binary.LittleEndian, true, 1, 64<<20, pkts)
}

// TestReadAheadSame: reading ahead gives the same packets, infos, offsets
// and final error as reading in turn, in every format, from a file (whole
// buffers), a stream of short reads, a byte at a time, and compressed, in
// tiny buffers and in the real ones.
func TestReadAheadSame(t *testing.T) {
	cases := []built{builtPcap(binary.LittleEndian, false), builtPcap(binary.BigEndian, true), builtPcapng(), builtERF(),
		{name: "big pcap", file: bigPcap()}}
	dir := t.TempDir()
	for _, c := range cases {
		want := fuzzRead(t, c.file, bytes.NewReader(c.file), c.format)
		if want.err != nil || len(want.pkts) == 0 {
			t.Fatalf("%s: %d packets, %v", c.name, len(want.pkts), want.err)
		}
		path := filepath.Join(dir, "f")
		if err := os.WriteFile(path, c.file, 0o644); err != nil {
			t.Fatal(err)
		}
		gz := compress(t, "gzip", c.file)
		for _, sz := range []struct{ size, head int }{{61, 16}, {4096, 300}, {aheadBufSize, aheadHead}} {
			ahead := func(r *Reader) { r.readAhead(sz.size, sz.head) }
			got := fuzzRead(t, c.file, &shortReads{bytes.NewReader(c.file), len(c.file)}, c.format, ahead)
			sameResult(t, want, got)
			got = fuzzRead(t, c.file, noSeek{bytes.NewReader(gz)}, c.format, ahead)
			sameResult(t, want, got)
			if len(c.file) < 1<<16 {
				got = fuzzRead(t, c.file, iotest.OneByteReader(bytes.NewReader(c.file)), c.format, ahead)
				sameResult(t, want, got)
			}
			r, err := OpenFormat(path, c.format)
			if err != nil {
				t.Fatal(err)
			}
			ahead(r)
			var offs []int64
			for {
				data, _, err := r.Next()
				if err != nil {
					if err != io.EOF {
						t.Fatalf("%s from a file: %v", c.name, err)
					}
					break
				}
				if off := r.DataOffset(data); off != r.Offset()+int64(bytes.Index(c.file[r.Offset():], data)) {
					t.Fatalf("%s: packet %d: DataOffset %d, record at %d", c.name, r.PacketNumber(), off, r.Offset())
				}
				offs = append(offs, r.Offset())
			}
			r.Close()
			if len(offs) != len(want.offsets) || offs[len(offs)-1] != want.offsets[len(offs)-1] {
				t.Fatalf("%s from a file: %d packets, want %d", c.name, len(offs), len(want.offsets))
			}
		}
	}
}

// TestReadAheadTruncated: a capture cut at every byte, read ahead, stops
// with the same error (packet, offset, reason) after the same packets.
func TestReadAheadTruncated(t *testing.T) {
	for _, c := range []built{builtPcap(binary.LittleEndian, false), builtPcapng(), builtERF()} {
		for cut := 0; cut <= len(c.file); cut++ {
			b := c.file[:cut]
			want := fuzzRead(t, b, bytes.NewReader(b), c.format)
			got := fuzzRead(t, b, &shortReads{bytes.NewReader(b), len(b)}, c.format, tinyAhead) // short reads: open does not buffer it all, the goroutine reads the rest
			sameResult(t, want, got)
		}
	}
}

// TestReadAheadKeepBuffers: with KeepBuffers, every packet read ahead
// stays intact until its buffer is handed back, and a swap that returns a
// buffer too short to read into costs nothing but an allocation.
func TestReadAheadKeepBuffers(t *testing.T) {
	file := bigPcap()
	want, err := readBytes(t, file)
	if err != nil {
		t.Fatal(err)
	}
	for _, short := range []bool{false, true} {
		r, err := NewReader(noSeek{bytes.NewReader(file)})
		if err != nil {
			t.Fatal(err)
		}
		r.KeepBuffers(func(old []byte) []byte {
			if short {
				return make([]byte, 10)
			}
			return make([]byte, len(old))
		})
		r.readAhead(8192, 1024)
		var kept [][]byte
		for {
			data, _, err := r.Next()
			if err != nil {
				if err != io.EOF {
					t.Fatal(err)
				}
				break
			}
			kept = append(kept, data)
		}
		r.Close()
		if len(kept) != len(want) {
			t.Fatalf("%d packets, want %d", len(kept), len(want))
		}
		for i := range kept {
			if !bytes.Equal(kept[i], want[i].data) {
				t.Fatalf("packet %d changed after later reads", i+1)
			}
		}
	}
}

// TestReadAheadReadError: an I/O error met by the goroutine comes after
// every packet before it, wrapped as without read-ahead.
func TestReadAheadReadError(t *testing.T) {
	b := builtPcap(binary.LittleEndian, false)
	boom := errors.New("boom")
	half := len(b.file) / 2
	read := func(setup ...func(*Reader)) ([]pkt, error) {
		r, err := NewReader(io.MultiReader(bytes.NewReader(b.file[:half]), iotest.ErrReader(boom)))
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		for _, f := range setup {
			f(r)
		}
		return readAll(t, r)
	}
	want, wantErr := read()
	got, err := read(tinyAhead)
	if !errors.Is(err, boom) || len(got) == 0 || len(got) != len(want) || err.Error() != wantErr.Error() {
		t.Fatalf("%d packets, then %v; want %d, then %v", len(got), err, len(want), wantErr)
	}
}

// TestReadAheadClose: a stream is read ahead a read at a time (its
// packets come as they are written), and Close does not wait for a read
// blocked on the pipe.
func TestReadAheadClose(t *testing.T) {
	b := builtPcap(binary.LittleEndian, false)
	first := b.blocks[2].end // the header and two packets
	pr, pw := io.Pipe()
	go pw.Write(b.file[:first])
	r, err := NewReader(pr)
	if err != nil {
		t.Fatal(err)
	}
	r.ReadAhead()
	go pw.Write(b.file[first:b.blocks[3].end])
	got := make(chan error, 1)
	go func() {
		for range 3 {
			if _, _, err := r.Next(); err != nil {
				got <- err
				return
			}
		}
		got <- nil
	}()
	select {
	case err := <-got:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the third packet, written, is not read")
	}
	closed := make(chan struct{})
	go func() { r.Close(); close(closed) }()
	select {
	case <-closed:
	case <-time.After(5 * time.Second):
		t.Fatal("Close waits for a blocked read")
	}
	pw.Close()
}
