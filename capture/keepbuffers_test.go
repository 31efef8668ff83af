package capture

import (
	"bytes"
	"encoding/binary"
	"testing"
	"testing/iotest"
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
