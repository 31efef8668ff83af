// Package testcap reads capture files for tests through gopacket's pcapgo,
// a reader independent of rocetap's own capture package, and says what a
// test does when an oracle it needs is missing (oracle.go).
package testcap

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
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
	return readAll(t, path, func(f *os.File) (recordReader, error) {
		r, err := pcapgo.NewReader(f)
		if err != nil {
			return nil, err
		}
		return pcapRecords{r}, nil
	})
}

// recordReader is one of gopacket's two file readers, giving each record
// with its link type.
type recordReader interface {
	next() ([]byte, gopacket.CaptureInfo, layers.LinkType, error)
}

type pcapRecords struct{ r *pcapgo.Reader }

func (p pcapRecords) next() ([]byte, gopacket.CaptureInfo, layers.LinkType, error) {
	data, ci, err := p.r.ReadPacketData()
	return data, ci, p.r.LinkType(), err
}

// readAll opens path, makes its reader with open and returns every
// record; any error but the clean end fails the test.
func readAll(t testing.TB, path string, open func(*os.File) (recordReader, error)) []Frame {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := open(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	var out []Frame
	for n := 1; ; n++ {
		data, ci, lt, err := r.next()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatalf("%s frame %d: %v", path, n, err)
		}
		out = append(out, Frame{File: filepath.Base(path), Number: n, Data: data, Len: ci.Length, LinkType: lt, Time: ci.Timestamp})
	}
}

// Glob returns the files the patterns match, in order; fewer than least
// fails the test (a test over "every capture" must not pass on none).
func Glob(t testing.TB, least int, patterns ...string) []string {
	t.Helper()
	var files []string
	for _, p := range patterns {
		m, err := filepath.Glob(p)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	if len(files) < least {
		t.Fatalf("%d captures match %v, want at least %d", len(files), patterns, least)
	}
	return files
}
