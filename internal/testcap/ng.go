package testcap

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gopacket/gopacket/pcapgo"
)

// ReadFile returns every record of a pcap or pcapng file (by its
// extension), with each pcapng record's interface link type.
func ReadFile(t testing.TB, path string) []Frame {
	t.Helper()
	if !strings.HasSuffix(path, ".pcapng") {
		return ReadPcap(t, path)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := pcapgo.NewNgReader(f, pcapgo.NgReaderOptions{WantMixedLinkType: true})
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
		ifc, err := r.Interface(ci.InterfaceIndex)
		if err != nil {
			t.Fatalf("%s frame %d: %v", path, n, err)
		}
		out = append(out, Frame{File: filepath.Base(path), Number: n, Data: data, Len: ci.Length, LinkType: ifc.LinkType, Time: ci.Timestamp})
	}
}
