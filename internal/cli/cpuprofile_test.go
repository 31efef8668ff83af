package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// --cpuprofile never replaces a file: an existing one is kept, and the
// command does nothing; a new one is written whole.
func TestCPUProfileKeepsFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "cpu.prof")
	if _, errOut, code := run(t, nil, "stats", "-r", rxe+"read_atomic.pcap", "--cpuprofile", path); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if st, err := os.Stat(path); err != nil || st.Size() == 0 {
		t.Fatalf("no profile written: %v", err)
	}
	old := []byte("a user's file")
	if err := os.WriteFile(path, old, 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := run(t, nil, "stats", "-r", rxe+"read_atomic.pcap", "--cpuprofile", path)
	if code != ExitInput || out != "" || !strings.Contains(errOut, "--cpuprofile "+path+": file exists") {
		t.Errorf("exit %d, stdout %q, stderr %q; want exit %d, nothing printed, the file named", code, out, errOut, ExitInput)
	}
	if got, _ := os.ReadFile(path); !bytes.Equal(got, old) {
		t.Error("the existing file was changed")
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".*")); len(left) != 0 {
		t.Errorf("temporary files left: %v", left)
	}
}

// A command that fails still writes its profile, whole, and leaves no
// temporary file.
func TestCPUProfileFailedCommand(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "cpu.prof")
	if _, _, code := run(t, nil, "stats", "-r", filepath.Join(dir, "no-such.pcap"), "--cpuprofile", path); code != ExitInput {
		t.Fatalf("exit %d, want %d (no such capture)", code, ExitInput)
	}
	if st, err := os.Stat(path); err != nil || st.Size() == 0 {
		t.Errorf("no profile after a failed command: %v", err)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".*")); len(left) != 0 {
		t.Errorf("temporary files left: %v", left)
	}
}
