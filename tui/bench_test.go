package tui

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/rocetap/rocetap/capture"
	"github.com/rocetap/rocetap/decode"
	"github.com/rocetap/rocetap/decode/filter"
)

// benchCapture writes n packets, cm_rping's over and over with times
// moving on, and returns the path.
func benchCapture(b testing.TB, n int) string {
	b.Helper()
	ref := readRef(b, td+"rxe/cm_rping.pcap")
	path := filepath.Join(b.TempDir(), "bench.pcap")
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	w, err := capture.NewPcapWriter(f, decode.LinkTypeEthernet, 65535, true)
	if err != nil {
		b.Fatal(err)
	}
	t := ref.pkts[0].info.Timestamp
	for i := range n {
		rp := ref.pkts[i%len(ref.pkts)]
		info := rp.info
		info.Timestamp = t.Add(time.Duration(i) * time.Microsecond)
		if err := w.WritePacket(info, rp.data); err != nil {
			b.Fatal(err)
		}
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
	return path
}

// BenchmarkIndexBuild indexes a capture: one op is one packet. Without a
// tracker it only reads; with one it also decodes and tracks each packet,
// as rocetap tui does.
func BenchmarkIndexBuild(b *testing.B) {
	const n = 100000
	path := benchCapture(b, n)
	for _, c := range []struct {
		name string
		o    BuildOptions
	}{
		{"read", BuildOptions{}},
		{"tracked", BuildOptions{NewTracker: newTracker}},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i += n {
				ix, err := OpenIndex(path)
				if err != nil {
					b.Fatal(err)
				}
				ix.Build(c.o)
				if ix.Len() != n {
					b.Fatalf("%d packets indexed, want %d", ix.Len(), n)
				}
				ix.Close()
			}
		})
	}
}

// BenchmarkListRow renders list rows that are not in the row cache (a
// scroll to new packets): one op is one row.
func BenchmarkListRow(b *testing.B) {
	const n = 100000
	ix, err := OpenIndex(benchCapture(b, n))
	if err != nil {
		b.Fatal(err)
	}
	defer ix.Close()
	ix.Build(BuildOptions{NewTracker: newTracker})
	c := newListContent(ix)
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		if cell := c.GetCell(1+(i*rowCacheSize+i)%n, len(columns)-1); cell == nil {
			b.Fatal("no cell")
		}
	}
}

// BenchmarkFilter runs a display filter over every packet as the filter
// bar does: one op is one packet.
func BenchmarkFilter(b *testing.B) {
	const n = 100000
	ix, err := OpenIndex(benchCapture(b, n))
	if err != nil {
		b.Fatal(err)
	}
	defer ix.Close()
	ix.Build(BuildOptions{NewTracker: newTracker})
	for _, expr := range []string{"infiniband.bth.opcode == 17", "rocetap.session.id == 3"} {
		flt, err := filter.Compile(expr)
		if err != nil {
			b.Fatal(err)
		}
		a := &App{ix: ix, o: Options{NewTracker: newTracker}}
		b.Run(expr, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i += n {
				if shown := a.runFilter(flt); len(shown) == 0 {
					b.Fatal("nothing matched")
				}
			}
		})
	}
}
