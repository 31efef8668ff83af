package cli

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestFirstPassSkipsFIFO: a capture on a named pipe (<(...)) can be read
// once; a field that asks for a first pass (rocetap.mad.response_in) must
// not use up the stream before the pass that prints it. Every frame is
// printed, as from the file (without the second pass's answers).
func TestFirstPassSkipsFIFO(t *testing.T) {
	const capture = "../../testdata/rxe/cm_rping.pcap"
	args := func(r string) []string {
		return []string{"decode", "-r", r, "-T", "fields", "-e", "frame.number", "-e", "rocetap.mad.response_in"}
	}
	want, _, code := run(t, nil, args(capture)...)
	if code != 0 || strings.Count(want, "\n") < 10 {
		t.Fatalf("from the file: exit %d, %q", code, want)
	}
	fifo := filepath.Join(t.TempDir(), "cap.fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	go func() {
		w, err := os.OpenFile(fifo, os.O_WRONLY, 0)
		if err != nil {
			return
		}
		defer w.Close()
		f, err := os.Open(capture)
		if err != nil {
			return
		}
		defer f.Close()
		_, _ = io.Copy(w, f)
	}()
	type result struct {
		out, stderr string
		code        int
	}
	done := make(chan result, 1)
	go func() {
		var r result
		r.out, r.stderr, r.code = run(t, nil, args(fifo)...)
		done <- r
	}()
	var r result
	select {
	case r = <-done:
	case <-time.After(time.Minute):
		// A second open of the FIFO waits for a writer that is gone.
		t.Fatal("from a FIFO: decode still waiting after a minute (it read the pipe twice)")
	}
	got, stderr, code := r.out, r.stderr, r.code
	if code != 0 {
		t.Fatalf("from a FIFO: exit %d: %s", code, stderr)
	}
	if g, w := strings.Count(got, "\n"), strings.Count(want, "\n"); g != w {
		t.Errorf("from a FIFO: %d frames, from the file %d:\n%s", g, w, got)
	}
}
