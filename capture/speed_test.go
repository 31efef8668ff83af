package capture

import (
	"io"
	"path/filepath"
	"testing"
)

// The pcapng if_speed option reaches InterfaceSpeed (tshark's capinfos
// reads the same 10000000000 from pfc_pauses.pcapng); files without it
// give 0.
func TestInterfaceSpeed(t *testing.T) {
	for _, c := range []struct {
		file string
		want uint64
	}{
		{"pfc_pauses.pcapng", 10_000_000_000},
		{"sll_sll2_raw.pcapng", 0},
		{"pfc.pcap", 0},
	} {
		r, err := Open(filepath.Join("..", "testdata", "synth", c.file))
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := r.Next(); err != nil && err != io.EOF {
			t.Fatal(err)
		}
		if got := r.InterfaceSpeed(0); got != c.want {
			t.Errorf("%s: interface 0 at %d bits/s, want %d", c.file, got, c.want)
		}
		if got := r.InterfaceSpeed(7); got != 0 {
			t.Errorf("%s: interface 7 (none) at %d bits/s", c.file, got)
		}
		r.Close()
	}
}
