package cli

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/rocetap/rocetap/capture"
	"github.com/rocetap/rocetap/internal/outfile"
	"github.com/rocetap/rocetap/stream"
)

// TestWriteErrorExits: every command that writes a report or packets to
// standard output says so and exits 4 (ExitOutput, the output is
// incomplete) when the output cannot be written (a full disk), whatever
// the output's size: decode and fields threw away the error of their
// last write, so a short output to a full disk ended with exit 0 and
// nothing on standard error; path (before 1875a52) went on formatting
// its report after a broken pipe and exited 0.
func TestWriteErrorExits(t *testing.T) {
	f := td + "rxe/pt_write.pcap"
	a, b := td+"path/a.pcapng", td+"path/b.pcapng"
	for _, args := range [][]string{
		{"path", "-r", a, "-r", b},
		{"path", "-r", a, "-r", b, "-T", "json"},
		{"path", "-r", a, "-r", b, "-T", "fields", "-e", "frame.number"},
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

// failWriter fails every write, as a full disk does.
type failWriter struct{ writes int }

func (w *failWriter) Write([]byte) (int, error) {
	w.writes++
	return 0, errors.New("no space left on device")
}

// TestWriteErrorWithDamage: a capture damaged part-way whose report cannot
// be written either exits 4 and says both: the output error was lost, and
// exit 2 ("every packet before the damage was printed") was untrue.
func TestWriteErrorWithDamage(t *testing.T) {
	damaged, _, _ := corruptCapture(t)
	for _, cmd := range []string{"decode", "stats", "sessions", "expert"} {
		var w failWriter
		var errOut bytes.Buffer
		code := Main([]string{cmd, "-r", damaged}, IO{Out: &w, ErrOut: &errOut})
		if code != ExitOutput || !strings.Contains(errOut.String(), "writing the output: no space left on device") || !strings.Contains(errOut.String(), "packet 9") {
			t.Errorf("%s: exit %d, %q; want 4, the write error and the damage", cmd, code, errOut.String())
		}
	}
}

// TestExitStatusOutputFiles: a -w or -o file, or a capture file, that
// could not be written is exit 4, like standard output.
func TestExitStatusOutputFiles(t *testing.T) {
	for _, err := range []error{
		&outfile.WriteError{Path: "out.pcap", Err: syscall.EFBIG},
		fmt.Errorf("-o x: %w", &outfile.WriteError{Path: "x", Err: syscall.ENOSPC}),
		&capture.WriteError{File: "cap.pcapng", Err: syscall.ENOSPC},
		errors.Join(&stream.CorruptError{Err: io.ErrUnexpectedEOF}, &outputError{syscall.ENOSPC}),
	} {
		if got := exitStatus(err); got != ExitOutput {
			t.Errorf("%v: exit %d, want %d", err, got, ExitOutput)
		}
	}
}
