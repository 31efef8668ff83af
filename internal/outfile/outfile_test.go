package outfile

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCreate(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.pcap")
	os.WriteFile(in, []byte("input"), 0o644)
	old := filepath.Join(dir, "old.pcap")
	os.WriteFile(old, []byte("precious"), 0o644)
	listing := func() []string {
		es, _ := os.ReadDir(dir)
		var n []string
		for _, e := range es {
			n = append(n, e.Name())
		}
		return n
	}

	// A new file appears only on Commit.
	out := filepath.Join(dir, "new.pcap")
	f, err := Create(out, Options{Inputs: []string{in}})
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("data")
	if _, err := os.Stat(out); err == nil {
		t.Fatal("the destination exists before Commit")
	}
	if err := f.Commit(); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(out); string(b) != "data" {
		t.Fatalf("%q", b)
	}

	// Abort leaves nothing behind and touches no existing file.
	f, err = Create(old, Options{Force: true})
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("half")
	f.Abort()
	if b, _ := os.ReadFile(old); string(b) != "precious" {
		t.Fatalf("Abort changed the existing file: %q", b)
	}
	if n := listing(); len(n) != 3 {
		t.Fatalf("directory holds %v", n)
	}

	// Refusals.
	if _, err := Create(old, Options{}); !errors.Is(err, ErrExists) || !strings.Contains(err.Error(), "rocetap does not replace") || !strings.Contains(err.Error(), "--force") {
		t.Errorf("existing: %v", err)
	}
	if _, err := Create(old, Options{Program: "gencap", ForceFlag: "-force"}); !errors.Is(err, ErrExists) || !strings.Contains(err.Error(), "gencap does not replace") || !strings.Contains(err.Error(), "add -force") {
		t.Errorf("existing, another program's: %v", err)
	}
	if _, err := Create(in, Options{Force: true, Inputs: []string{in}}); err == nil || !strings.Contains(err.Error(), "is the input file") {
		t.Errorf("input: %v", err)
	}
	if _, err := Create(dir, Options{Force: true}); err == nil || !strings.Contains(err.Error(), "directory") {
		t.Errorf("directory: %v", err)
	}

	// --force replaces on Commit only.
	f, err = Create(old, Options{Force: true})
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("new")
	if err := f.Commit(); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(old); string(b) != "new" {
		t.Fatalf("%q", b)
	}
	if n := listing(); len(n) != 3 {
		t.Fatalf("directory holds %v", n)
	}
}
