// Package testcap reads capture files for tests through gopacket's pcapgo,
// a reader independent of rocetap's own capture package.
package testcap

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
)

// Frame is one record of a pcap file.
type Frame struct {
	File     string // base name of the file
	Number   int    // 1-based
	Data     []byte
	Len      int // length on the wire
	LinkType layers.LinkType
	Time     time.Time
}

// ReadPcap returns every record of a classic pcap file; any read error
// other than the clean end fails the test.
func ReadPcap(t testing.TB, path string) []Frame {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := pcapgo.NewReader(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	var out []Frame
	for n := 1; ; n++ {
		data, ci, err := r.ReadPacketData()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatalf("%s frame %d: %v", path, n, err)
		}
		out = append(out, Frame{File: filepath.Base(path), Number: n, Data: data, Len: ci.Length, LinkType: r.LinkType(), Time: ci.Timestamp})
	}
}
