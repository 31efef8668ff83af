package cli

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
)

// TestWriteErrorExits: every command that writes a report or packets to
// standard output says so and exits 4 (ExitOutput, the output is
// incomplete) when the output cannot be written (a full disk), whatever
// the output's size: decode and fields threw away the error of their
// last write, so a short output to a full disk ended with exit 0 and
// nothing on standard error.
func TestWriteErrorExits(t *testing.T) {
	f := td + "rxe/pt_write.pcap"
	for _, args := range [][]string{
		{"decode", "-r", f},
		{"decode", "-r", f, "-V"},
		{"decode", "-r", f, "-x"},
		{"decode", "-r", f, "-T", "fields", "-e", "frame.number"},
		{"decode", "-r", f, "-T", "json"},
		{"decode", "-r", f, "-T", "ek"},
		{"decode", "-r", f, "-Y", "infiniband"},
		{"decode", "-r", f, "-w", "OUT", "-P"},
		{"stats", "-r", f},
		{"stats", "-r", f, "-T", "json"},
		{"sessions", "-r", f},
		{"sessions", "-r", f, "-T", "json"},
		{"expert", "-r", f},
		{"expert", "-r", f, "-T", "json"},
		{"fields"},
	} {
		for i, a := range args {
			if a == "OUT" {
				args[i] = filepath.Join(t.TempDir(), "out.pcapng")
			}
		}
		var w failWriter
		var errOut bytes.Buffer
		if code := Main(args, IO{Out: &w, ErrOut: &errOut}); code != ExitOutput || !strings.Contains(errOut.String(), "no space left on device") {
			t.Errorf("%v: exit %d, %q; want 4 and the write error", args, code, errOut.String())
		}
		if w.writes == 0 {
			t.Errorf("%v: nothing was written", args)
		}
	}
}
