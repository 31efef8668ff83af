package tui

import (
	"testing"
	"time"

	"github.com/rocetap/rocetap/decode/filter"
)

// benchCapture writes n packets, cm_rping's over and over with times
// moving on, and returns the path.
func benchCapture(b testing.TB, n int) string {
	b.Helper()
	ref := readRef(b, td+"rxe/cm_rping.pcap")
	t := ref.pkts[0].info.Timestamp
	return writeRepeated(b, ref, n, func(i int) time.Time { return t.Add(time.Duration(i) * time.Microsecond) })
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
