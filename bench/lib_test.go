package bench

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// runLib runs script in bash from the repository root after bench/lib.sh,
// with OUT set to out; it returns the combined output and error. The test
// reads lib.sh itself, so that go test's cache knows the result depends
// on it.
func runLib(t *testing.T, out, script string) (string, error) {
	t.Helper()
	lib, err := os.ReadFile("lib.sh")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("bash", "-c", "set -euo pipefail\n"+string(lib)+"\n"+script)
	cmd.Dir = ".."
	cmd.Env = append(os.Environ(), "OUT="+out)
	b, err := cmd.CombinedOutput()
	return string(b), err
}

// interleave runs run r of a command that names a program spread_binaries
// copied from copy r (modulo the copies), wherever the command names it
// (first word or an argument; a program PATH finds too), and leaves
// other commands as they are, an empty argument too (under set -e, as
// bench/run.sh runs);
// remove_copies removes the copies.
func TestInterleaveRunsCopies(t *testing.T) {
	out := t.TempDir()
	prog := filepath.Join(out, "prog")
	seen := filepath.Join(out, "seen")
	if err := os.WriteFile(prog, []byte("#!/bin/sh\necho \"$0 $1\" >>"+seen+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	script := `
PATH=$OUT:$PATH
spread_binaries 3 "$OUT/prog" prog
direct=("$OUT/prog" d)
inner=(bash -c 'exec "$0" i' "$OUT/prog")
other=(sh -c 'echo "other o" >>"$0"' "$OUT/seen" "")
bare=(prog b)
interleave 4 all direct inner other bare 2>/dev/null
remove_copies
[ ! -e "$OUT/copies" ] || echo "copies left"
`
	if msg, err := runLib(t, out, script); err != nil || msg != "" {
		t.Fatalf("bash: %v: %s", err, msg)
	}
	b, err := os.ReadFile(seen)
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for r := 1; r <= 4; r++ {
		c := filepath.Join(out, "copies", strconv.Itoa((r-1)%3+1), "1.prog")
		want = append(want, c+" d", c+" i", "other o", filepath.Join(filepath.Dir(c), "2.prog")+" b")
	}
	if got := strings.TrimSuffix(string(b), "\n"); got != strings.Join(want, "\n") {
		t.Errorf("runs:\n%s\nwant:\n%s", got, strings.Join(want, "\n"))
	}
}

// spread_binaries stops, and keeps the directory, when OUT/copies exists
// and the bench did not make it.
func TestSpreadBinariesKeepsForeignCopies(t *testing.T) {
	out := t.TempDir()
	mine := filepath.Join(out, "copies", "mine")
	if err := os.MkdirAll(filepath.Dir(mine), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(mine, []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	msg, err := runLib(t, out, `spread_binaries 2 /bin/true; echo "went on"`)
	if err == nil || strings.Contains(msg, "went on") || !strings.Contains(msg, "the bench did not make it") {
		t.Fatalf("spread_binaries over a foreign copies directory: %v: %s", err, msg)
	}
	if b, err := os.ReadFile(mine); err != nil || string(b) != "keep" {
		t.Fatalf("the foreign file: %q, %v", b, err)
	}
}
