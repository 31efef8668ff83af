package tui

import (
	"bytes"
	"path/filepath"
	"testing"
)

// TestScan: Scan gives every packet of a range the bytes and entry Read
// gives, in order, over every capture in testdata, and stops when asked.
func TestScan(t *testing.T) {
	t.Parallel()
	files, _ := filepath.Glob("../testdata/*/*.pcap*")
	for _, path := range files {
		ix, err := OpenIndex(path)
		if err != nil {
			t.Fatal(err)
		}
		ix.Build(BuildOptions{})
		n := ix.Len()
		for _, r := range [][2]int{{0, n}, {n / 3, n}, {1, n / 2}, {n, n}} {
			want := r[0]
			err := ix.Scan(r[0], r[1], func(i int, data []byte, e Entry) bool {
				if i != want {
					t.Fatalf("%s: Scan gave packet %d, want %d", path, i, want)
				}
				want++
				rd, re, err := ix.Read(i, nil)
				if err != nil || !bytes.Equal(rd, data) || re != e {
					t.Fatalf("%s packet %d: Scan and Read differ (%v)", path, i+1, err)
				}
				return true
			})
			if err != nil || want != max(r[0], r[1]) {
				t.Errorf("%s: Scan(%d, %d) ended at %d: %v", path, r[0], r[1], want, err)
			}
		}
		calls := 0
		ix.Scan(0, n, func(int, []byte, Entry) bool { calls++; return calls < 2 })
		if n >= 2 && calls != 2 {
			t.Errorf("%s: Scan went on after false (%d calls)", path, calls)
		}
		ix.Close()
	}
}
