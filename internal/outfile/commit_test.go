package outfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// TestCommitKeepsAFileThatAppeared: a file that appears at the
// destination while the output is written (another program, another
// rocetap) is the user's: without Force, Commit leaves it as it is and
// keeps what was written in the temporary file, saying where; with Force
// it is replaced, as asked.
//
// It runs with each way place has to move the file without replacing
// one (renameat2's RENAME_NOREPLACE, a hard link, a check then a rename),
// as on file systems that lack the ones before it.
func TestCommitKeepsAFileThatAppeared(t *testing.T) {
	all := placers
	t.Cleanup(func() { placers = all })
	for _, pl := range []struct {
		name string
		ways []func(tmp, path string) error
	}{
		{"renameat2", all},
		{"link", all[1:]},
		{"check then rename", all[2:]},
	} {
		for _, tc := range []struct {
			name  string
			force bool
		}{
			{"without --force", false},
			{"with --force", true},
		} {
			t.Run(pl.name+"/"+tc.name, func(t *testing.T) {
				placers = pl.ways
				commitOverAppeared(t, tc.force)
			})
		}
	}
}

func commitOverAppeared(t *testing.T, force bool) {
	t.Helper()
	dir := t.TempDir()
	out := filepath.Join(dir, "out.pcap")
	f, err := Create(out, Options{Force: force, Flag: "-w"})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Abort()
	tmp := f.Name()
	f.WriteString("data")
	if err := os.WriteFile(out, []byte("precious"), 0o644); err != nil {
		t.Fatal(err)
	}
	err = f.Commit()
	got, _ := os.ReadFile(out)
	if force {
		if err != nil || string(got) != "data" {
			t.Fatalf("Commit: %v; %s holds %q, want the output", err, out, got)
		}
		if es, _ := os.ReadDir(dir); len(es) != 1 {
			t.Errorf("%d files in the directory, want only %s", len(es), out)
		}
		return
	}
	if err == nil || !errors.Is(err, ErrExists) {
		t.Fatalf("Commit over a file that appeared: %v", err)
	}
	for _, w := range []string{"-w " + out, "appeared", tmp, "--force"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("%q does not say %q", err, w)
		}
	}
	if string(got) != "precious" {
		t.Errorf("%s now holds %q", out, got)
	}
	if kept, _ := os.ReadFile(tmp); string(kept) != "data" {
		t.Errorf("the output is not kept in %s: %q", tmp, kept)
	}
	f.Abort()
	if m, _ := filepath.Glob(filepath.Join(dir, "*")); !slices.Contains(m, out) {
		t.Errorf("after Abort: %q", m)
	}
}

// TestRenameNoReplace: where rocetap runs its tests (Linux, a file system
// with renameat2), the atomic rename is the one place uses: it moves a
// file to a free name and refuses a taken one, leaving both files.
func TestRenameNoReplace(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	os.WriteFile(a, []byte("new"), 0o644)
	err := renameNoReplace(a, b)
	if errors.Is(err, errors.ErrUnsupported) {
		if runtime.GOOS == "linux" {
			t.Fatalf("renameat2 RENAME_NOREPLACE unsupported in %s: %v", dir, err)
		}
		t.Skip("no atomic rename without replace on " + runtime.GOOS)
	}
	if err != nil {
		t.Fatalf("rename to a free name: %v", err)
	}
	os.WriteFile(a, []byte("other"), 0o644)
	if err := renameNoReplace(a, b); !errors.Is(err, fs.ErrExist) {
		t.Fatalf("rename over a file: %v, want it to fail with ErrExist", err)
	}
	if got, _ := os.ReadFile(b); string(got) != "new" {
		t.Errorf("%s holds %q", b, got)
	}
	if got, _ := os.ReadFile(a); string(got) != "other" {
		t.Errorf("%s holds %q", a, got)
	}
}

// TestCreateDanglingSymlink: a symbolic link to nothing at the
// destination is there: without Force, Create refuses it at once (Commit
// would keep it and leave the output in a temporary file); with Force it
// is replaced by the output, the link's missing target left alone.
func TestCreateDanglingSymlink(t *testing.T) {
	for _, force := range []bool{false, true} {
		dir := t.TempDir()
		out := filepath.Join(dir, "out.pcap")
		if err := os.Symlink(filepath.Join(dir, "nowhere"), out); err != nil {
			t.Fatal(err)
		}
		f, err := Create(out, Options{Force: force, Flag: "-w"})
		if !force {
			if !errors.Is(err, ErrExists) {
				t.Fatalf("without --force: %v, want ErrExists", err)
			}
			if _, err := os.Lstat(out); err != nil {
				t.Errorf("the link is gone: %v", err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("with --force: %v", err)
		}
		f.WriteString("data")
		if err := f.Commit(); err != nil {
			t.Fatal(err)
		}
		if got, _ := os.ReadFile(out); string(got) != "data" {
			t.Errorf("with --force: %q at the destination", got)
		}
		if _, err := os.Lstat(filepath.Join(dir, "nowhere")); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("the link's target was created: %v", err)
		}
	}
}

// TestWriteErrorType: a failed write of the output, and a Commit that
// cannot make it durable, are *WriteError (the CLI exits 4 on them),
// naming the destination; a file that appeared is not one.
func TestWriteErrorType(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out.pcap")
	f, err := Create(out, Options{Flag: "-w"})
	if err != nil {
		t.Fatal(err)
	}
	f.File.Close() // every write now fails
	var we *WriteError
	if _, err := f.Write([]byte("x")); !errors.As(err, &we) || we.Path != out {
		t.Errorf("Write: %v (%T), want a *WriteError for %s", err, err, out)
	}
	if _, err := f.WriteString("x"); !errors.As(err, &we) {
		t.Errorf("WriteString: %v (%T), want a *WriteError", err, err)
	}
	if err := f.Commit(); !errors.As(err, &we) {
		t.Errorf("Commit: %v (%T), want a *WriteError", err, err)
	}
	if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("%s exists after a failed Commit: %v", out, err)
	}
}
