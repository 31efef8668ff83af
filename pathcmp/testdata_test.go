package pathcmp_test

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/rocetap/rocetap/internal/synth"
)

var update = flag.Bool("update", false, "rewrite testdata/path from internal/synth")

// Example is the pair of captures in testdata/path (the README's
// example): A is a host's Linux cooked capture (SLL2), B a mirror's
// Ethernet capture whose clock is 1.5 s ahead and gains 150 ppm; between
// them 2 ms of delay, ±50 µs of jitter, requests 20, 21 and 90 and
// response 60 lost, request 40 duplicated, request 70 held 5 ms
// (overtaken by the next), and the responder NAKs request 110.
var Example = synth.TwoPoint{
	Start: time.Date(2026, 11, 25, 9, 30, 0, 0, time.UTC), Requests: 150, Gap: 4 * time.Millisecond,
	Delay: 2 * time.Millisecond, Jitter: 50 * time.Microsecond, Respond: 15 * time.Microsecond, PSN0: 4096,
	Lost: []int{20, 21, 90}, LostResp: []int{60}, Dup: []int{40}, Late: map[int]time.Duration{70: 5 * time.Millisecond},
	NAK: []int{110}, Offset: 1500 * time.Millisecond, DriftPPM: 150,
	LinkA: synth.LinkSLL2, LinkB: synth.LinkEthernet,
}

// TestTestdata checks that testdata/path holds what Example builds
// (go test ./pathcmp -update rewrites it).
func TestTestdata(t *testing.T) {
	a, b, _, err := Example.Build()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []synth.File{a, b} {
		want, err := f.Encode()
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join("..", "testdata", "path", f.Name+".pcapng")
		if *update {
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, want, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := os.ReadFile(p)
		if err != nil {
			t.Fatalf("%v (go test ./pathcmp -update writes it)", err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s differs from what internal/synth builds: go test ./pathcmp -update", p)
		}
	}
}
