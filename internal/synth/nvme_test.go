package synth

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// nvmeDir is where the NVMe-oF scenarios live.
var nvmeDir = filepath.Join("..", "..", "testdata", "ulp", "synth")

// TestNVMeGolden regenerates the NVMe-oF scenarios and compares them byte
// for byte with the committed files (-update rewrites them).
func TestNVMeGolden(t *testing.T) {
	fs, err := NVMeFiles()
	if err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.MkdirAll(nvmeDir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for i := range fs {
		f := &fs[i]
		t.Run(f.Name, func(t *testing.T) {
			got, err := f.Encode()
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(nvmeDir, f.Name)
			if *update {
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test ./internal/synth -update)", err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("%s differs from the generated file; run go test ./internal/synth -update if the change is intended", path)
			}
			if len(got) > 8<<10 {
				t.Errorf("%s is %d bytes; keep synthetic captures under 8 KB", f.Name, len(got))
			}
		})
	}
}
