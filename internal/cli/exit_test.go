package cli

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
)

// TestExitStatusTable: every command follows the one exit-status table
// (exitTable), and a command that fails prints nothing on stdout but what
// it had already streamed; JSON is always a valid document when anything
// was printed.
func TestExitStatusTable(t *testing.T) {
	dir := t.TempDir()
	nope := filepath.Join(dir, "nope.pcap")
	damaged, _, _ := corruptCapture(t) // packet 9 of 25 is bad
	header := filepath.Join(dir, "header.pcap")
	if err := os.WriteFile(header, []byte{0xd4, 0xc3, 0xb2, 0xa1, 2, 0, 4, 0, 0, 0}, 0o644); err != nil {
		t.Fatal(err)
	}
	badMPT := filepath.Join(dir, "bad.mpt.json")
	if err := os.WriteFile(badMPT, []byte(`{"version": 1, "responder": {"address": "10.77.0.2"}, "qps": [{"qpn": 1}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	good, mpt := rxe+"pt_write.pcap", rxe+"pt_write.mpt.json"
	// stdout: "" nothing, "json" a valid JSON document, "any" the
	// command's output (success or the packets before the damage).
	cases := []struct {
		name   string
		args   []string
		code   int
		stdout string
	}{
		{"decode ok", []string{"decode", "-r", good}, ExitOK, "any"},
		{"decode no such file", []string{"decode", "-r", nope}, ExitInput, ""},
		{"decode json no such file", []string{"decode", "-T", "json", "-r", nope}, ExitInput, ""},
		{"decode fields header no such file", []string{"decode", "-T", "fields", "-E", "header=y", "-e", "frame.number", "-r", nope}, ExitInput, ""},
		{"decode cut in the file header", []string{"decode", "-r", header}, ExitInput, ""},
		{"decode not a capture", []string{"decode", "-r", rxe + "README.md"}, ExitInput, ""},
		{"decode bad filter", []string{"decode", "-r", good, "-Y", "nosuch.field"}, ExitInput, ""},
		{"decode bad MPT", []string{"decode", "-r", good, "--mpt", badMPT}, ExitInput, ""},
		{"decode bad flag", []string{"decode", "--nosuch"}, ExitInput, ""},
		{"decode damaged", []string{"decode", "-r", damaged}, ExitDamaged, "any"},
		{"decode json damaged", []string{"decode", "-T", "json", "-r", damaged}, ExitDamaged, "json"},
		{"decode json damaged, nothing selected", []string{"decode", "-T", "json", "-Y", "frame.number > 100", "-r", damaged}, ExitDamaged, "json"},
		{"sessions no -r", []string{"sessions"}, ExitInput, ""},
		{"sessions no such file", []string{"sessions", "-r", nope}, ExitInput, ""},
		{"sessions json no such file", []string{"sessions", "-T", "json", "-r", nope}, ExitInput, ""},
		{"sessions json damaged", []string{"sessions", "-T", "json", "-r", damaged}, ExitDamaged, "json"},
		{"stats no such file", []string{"stats", "-r", nope}, ExitInput, ""},
		{"stats bad MPT", []string{"stats", "-r", good, "--mpt", badMPT}, ExitInput, ""},
		{"stats damaged", []string{"stats", "-r", damaged}, ExitDamaged, "any"},
		{"expert json no such file", []string{"expert", "-T", "json", "-r", nope}, ExitInput, ""},
		{"expert json ok", []string{"expert", "-T", "json", "-r", good}, ExitOK, "json"},
		{"replay ok", []string{"replay", "-r", good, "--mpt", mpt}, ExitOK, "any"},
		{"replay divergence", []string{"replay", "-r", rxe + "err_recv_too_small.pcap", "--mpt", rxe + "err_recv_too_small.mpt.json", "--profile", "ibta"}, ExitDivergence, "any"},
		{"replay bad MPT", []string{"replay", "-r", good, "--mpt", badMPT}, ExitInput, ""},
		{"replay no such file", []string{"replay", "-r", nope, "--mpt", mpt}, ExitInput, ""},
		{"replay json no such file", []string{"replay", "-T", "json", "-r", nope, "--mpt", mpt}, ExitInput, ""},
		{"mpt check ok", []string{"mpt", "check", mpt}, ExitOK, "any"},
		{"mpt check bad", []string{"mpt", "check", badMPT}, ExitInput, ""},
		{"mpt check no such file", []string{"mpt", "check", nope}, ExitInput, ""},
		{"mpt learn no such file", []string{"mpt", "learn", "-r", nope}, ExitInput, ""},
		{"mpt learn damaged", []string{"mpt", "learn", "-r", damaged}, ExitDamaged, "json"},
		{"filter check bad", []string{"filter", "check", "nosuch.field == 1"}, ExitInput, ""},
		{"fields ok", []string{"fields", "infiniband.bth"}, ExitOK, "any"},
		{"edit no such file", []string{"edit", "-r", nope, "-w", filepath.Join(dir, "out.pcap")}, ExitInput, ""},
		{"unknown command", []string{"nosuch"}, ExitInput, ""},
		{"sessions two points ok", []string{"sessions", "-T", "json", "-r", good, "-r", good}, ExitOK, "json"},
		{"sessions two points no such file", []string{"sessions", "-r", good, "-r", nope}, ExitInput, ""},
		{"stats two points json damaged", []string{"stats", "-T", "json", "-r", good, "-r", damaged}, ExitDamaged, "json"},
		{"expert two points damaged", []string{"expert", "-r", damaged, "-r", good}, ExitDamaged, "any"},
		{"expert three points", []string{"expert", "-r", good, "-r", good, "-r", good}, ExitInput, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, errOut, code := run(t, nil, c.args...)
			if code != c.code {
				t.Fatalf("exit %d, want %d; stderr %q", code, c.code, errOut)
			}
			if code != ExitOK && !strings.Contains(errOut, "\nrocetap: ") && !strings.HasPrefix(errOut, "rocetap: ") {
				t.Errorf("stderr %q: want the error, prefixed rocetap:", errOut)
			}
			switch c.stdout {
			case "":
				if out != "" {
					t.Errorf("stdout %q, want nothing", out)
				}
			case "json":
				if !json.Valid([]byte(out)) {
					t.Errorf("stdout is not a valid JSON document:\n%s", out)
				}
			default:
				if out == "" {
					t.Error("stdout is empty")
				}
			}
		})
	}
}

// TestHelpExitTable: every command's --help ends with the exit statuses.
func TestHelpExitTable(t *testing.T) {
	for _, args := range [][]string{{"--help"}, {"decode", "--help"}, {"replay", "--help"}, {"mpt", "check", "--help"}, {"sessions", "--help"}} {
		out, _, code := run(t, nil, args...)
		if code != 0 || !strings.HasSuffix(out, exitTable+"\n") {
			t.Errorf("%v: exit %d, help does not end with the exit-status table:\n%s", args, code, out)
		}
	}
}

// TestHelpValueNames: pflag takes a back-quoted word in a flag's usage as
// its value name; help must read "-Y, --display-filter FILTER", not
// "-Y, --display-filter rocetap filter check".
func TestHelpValueNames(t *testing.T) {
	out, _, _ := run(t, nil, "decode", "--help")
	for _, want := range []string{"-Y, --display-filter FILTER ", "-e, --field FIELD "} {
		if !strings.Contains(out, want) {
			t.Errorf("decode --help lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "--display-filter rocetap") || strings.Contains(out, "--field rocetap") {
		t.Errorf("a back-quoted command became a value name:\n%s", out)
	}
}

// TestVersion: --version says which build this is, never a bare "dev".
func TestVersion(t *testing.T) {
	out, _, code := run(t, nil, "--version")
	if code != 0 || !strings.HasPrefix(out, "rocetap version ") || strings.Contains(out, "version dev\n") || !strings.Contains(out, "go1.") {
		t.Errorf("exit %d: %q", code, out)
	}
}

// TestCompressedDecode: decode reads a gzip, zstd or LZ4 capture as
// tshark does, printing what the uncompressed file prints; cut short, it
// prints the whole packets and names the packet and its offset in the
// decompressed data (exit status 2).
func TestCompressedDecode(t *testing.T) {
	raw, err := os.ReadFile(rxe + "read_atomic.pcap")
	if err != nil {
		t.Fatal(err)
	}
	want, _, _ := run(t, nil, "decode", "-r", rxe+"read_atomic.pcap")
	dir := t.TempDir()
	for _, c := range []struct {
		name string
		w    func(io.Writer) io.WriteCloser
	}{
		{"x.pcap.gz", func(w io.Writer) io.WriteCloser { return gzip.NewWriter(w) }},
		{"x.pcap.zst", func(w io.Writer) io.WriteCloser { z, _ := zstd.NewWriter(w); return z }},
		{"x.pcap.lz4", func(w io.Writer) io.WriteCloser { return lz4.NewWriter(w) }},
	} {
		for _, data := range [][]byte{raw, raw[:len(raw)-10]} {
			var b bytes.Buffer
			w := c.w(&b)
			w.Write(data)
			w.Close()
			path := filepath.Join(dir, c.name)
			if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			out, errOut, code := run(t, nil, "decode", "-r", path)
			if len(data) == len(raw) {
				if code != 0 || out != want {
					t.Errorf("%s: exit %d, output differs from the uncompressed capture's: %s", c.name, code, errOut)
				}
				continue
			}
			if code != ExitDamaged || !strings.HasPrefix(want, out) || strings.Count(out, "\n") != strings.Count(want, "\n")-1 ||
				!strings.Contains(errOut, "-decompressed data") {
				t.Errorf("%s cut short: exit %d, %d lines, stderr %q", c.name, code, strings.Count(out, "\n"), errOut)
			}
		}
	}
}

// TestDecodeWrite: decode -w never loses a file: the input and an
// existing file are refused (--force replaces the latter), a failure
// leaves no file, and a capture damaged part-way gives a file of the
// packets before the damage (exit 2). tshark's own -w is compared in
// internal/conformance.
func TestDecodeWrite(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.pcap")
	data, _ := os.ReadFile(rxe + "read_atomic.pcap")
	os.WriteFile(in, data, 0o644)
	existing := filepath.Join(dir, "keep.pcapng")
	os.WriteFile(existing, []byte("precious"), 0o644)
	out := filepath.Join(dir, "out.pcapng")
	count := func(path string) int {
		o, _, code := run(t, nil, "decode", "-r", path, "-T", "fields", "-e", "frame.number")
		if code != 0 {
			t.Fatalf("%s does not read back", path)
		}
		return strings.Count(o, "\n")
	}

	if o, errOut, code := run(t, nil, "decode", "-r", in, "-Y", "infiniband.bth.opcode == 18", "-w", out); code != 0 || o != "" {
		t.Fatalf("exit %d, stdout %q: %s", code, o, errOut)
	}
	if n := count(out); n != 3 {
		t.Errorf("%d packets written, want the 3 READ Response First", n)
	}
	if o, _, code := run(t, nil, "decode", "-r", in, "-Y", "infiniband.bth.opcode == 18", "-w", filepath.Join(dir, "p.pcap"), "-F", "pcap", "-P"); code != 0 || strings.Count(o, "\n") != 3 {
		t.Errorf("-P: exit %d, %q", code, o)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-w", in, "--force"}, "is the input file"},
		{[]string{"-w", existing}, "add --force"},
		{[]string{"-w", filepath.Join(dir, "x.cap"), "-F", "erf"}, `-F "erf": want pcapng or pcap`},
		{[]string{"-P"}, "-P goes with -w FILE or -x"},
	} {
		_, errOut, code := run(t, nil, append([]string{"decode", "-r", in}, c.args...)...)
		if code != ExitInput || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d, %q; want %q", c.args, code, errOut, c.want)
		}
	}
	if b, _ := os.ReadFile(existing); string(b) != "precious" {
		t.Fatal("an existing file was changed")
	}
	if _, _, code := run(t, nil, "decode", "-r", in, "-w", existing, "--force"); code != 0 || count(existing) != 16 {
		t.Errorf("--force: exit %d", code)
	}
	// One pcap cannot hold several link types: no file is left.
	mixed := filepath.Join(dir, "mixed.pcap")
	if _, errOut, code := run(t, nil, "decode", "-r", td+"synth/sll_sll2_raw.pcapng", "-w", mixed, "-F", "pcap"); code != ExitInput || !strings.Contains(errOut, "holds one link type") {
		t.Errorf("mixed link types to pcap: exit %d, %s", code, errOut)
	}
	if _, err := os.Stat(mixed); err == nil {
		t.Error("a failed -w left a file")
	}
	// Damaged part-way: the packets before the damage.
	damaged, _, _ := corruptCapture(t)
	part := filepath.Join(dir, "part.pcapng")
	if _, errOut, code := run(t, nil, "decode", "-r", damaged, "-w", part); code != ExitDamaged || !strings.Contains(errOut, "packet 9") {
		t.Errorf("damaged: exit %d, %s", code, errOut)
	}
	if n := count(part); n != 8 {
		t.Errorf("damaged: %d packets written, want the 8 before the damage", n)
	}
	if es, _ := os.ReadDir(dir); len(es) != 5 {
		var names []string
		for _, e := range es {
			names = append(names, e.Name())
		}
		t.Errorf("the directory holds %v: a temporary file was left", names)
	}
}

// TestDecodeWriteSignal: decode -w stopped by a signal leaves within a
// second, exit status 4, and leaves no file, not even its temporary one
// (the real binary, reading a stream that does not end).
func TestDecodeWriteSignal(t *testing.T) {
	if testing.Short() {
		t.Skip("builds rocetap (-short)")
	}
	bin := buildRocetap(t)
	data, err := os.ReadFile(rxe + "read_atomic.pcap")
	if err != nil {
		t.Fatal(err)
	}
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		dir := t.TempDir()
		out := filepath.Join(dir, "out.pcapng")
		cmd := exec.Command(bin, "decode", "-r", "-", "-w", out)
		in, err := cmd.StdinPipe()
		if err != nil {
			t.Fatal(err)
		}
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		in.Write(data) // and the stream stays open
		time.Sleep(300 * time.Millisecond)
		start := time.Now()
		cmd.Process.Signal(sig)
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != ExitOutput || time.Since(start) > time.Second {
				t.Errorf("%v: %v after %v, want exit %d within 1 s; stderr %q", sig, err, time.Since(start), ExitOutput, stderr.String())
			}
		case <-time.After(5 * time.Second):
			cmd.Process.Kill()
			t.Fatalf("%v: still running after 5 s", sig)
		}
		in.Close()
		if es, _ := os.ReadDir(dir); len(es) != 0 {
			t.Errorf("%v left %v", sig, es)
		}
		if !strings.Contains(stderr.String(), "was not written") {
			t.Errorf("%v: stderr %q", sig, stderr.String())
		}
	}
}

// TestPipedInputIsLive (issue 16.1): `slow writer | rocetap decode -r -`
// prints each packet within 200 ms of its arrival, as tshark does, for
// the summary (tracked), -T fields (parallel) and -l; a file keeps the
// batched path.
func TestPipedInputIsLive(t *testing.T) {
	if testing.Short() {
		t.Skip("builds rocetap (-short)")
	}
	bin := buildRocetap(t)
	data, err := os.ReadFile(rxe + "read_atomic.pcap")
	if err != nil {
		t.Fatal(err)
	}
	// The pcap header and the records of read_atomic.pcap, one by one.
	var recs [][]byte
	for off := 24; off+16 <= len(data); {
		n := int(binary.LittleEndian.Uint32(data[off+8:]))
		recs = append(recs, data[off:off+16+n])
		off += 16 + n
	}
	for _, args := range [][]string{
		{"decode", "-r", "-"},
		{"decode", "-r", "-", "-T", "fields", "-e", "frame.number"},
		{"decode", "-r", "-", "-T", "fields", "-e", "frame.number", "-e", "rocetap.session.id"},
		{"decode", "-r", "-", "-l", "-T", "json"},
	} {
		t.Run(strings.Join(args[3:], " "), func(t *testing.T) {
			cmd := exec.Command(bin, args...)
			in, _ := cmd.StdinPipe()
			outR, outW, _ := os.Pipe()
			cmd.Stdout = outW
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			outW.Close()
			defer cmd.Process.Kill()
			lines := make(chan time.Time, 100)
			go func() {
				buf := make([]byte, 1<<16)
				for {
					n, err := outR.Read(buf)
					for range bytes.Count(buf[:n], []byte("\n")) {
						lines <- time.Now()
					}
					if err != nil {
						close(lines)
						return
					}
				}
			}()
			in.Write(data[:24])
			for i := range 3 {
				sent := time.Now()
				in.Write(recs[i])
				select {
				case at, ok := <-lines:
					if !ok {
						t.Fatal("rocetap ended")
					}
					if d := at.Sub(sent); d > 200*time.Millisecond {
						t.Errorf("packet %d printed %v after it was written", i+1, d)
					}
					for len(lines) > 0 { // JSON's "[" line and the like
						<-lines
					}
				case <-time.After(2 * time.Second):
					t.Fatalf("packet %d not printed 2 s after it was written (the stream stays open)", i+1)
				}
				time.Sleep(300 * time.Millisecond)
			}
			in.Close()
			cmd.Wait()
		})
	}
}

// TestDecodeQuiet: -q prints no packets, and keeps the exit status.
func TestDecodeQuiet(t *testing.T) {
	out, _, code := run(t, nil, "decode", "-r", rxe+"read_atomic.pcap", "-q")
	if code != 0 || out != "" {
		t.Errorf("-q: exit %d, stdout %q", code, out)
	}
	damaged, _, _ := corruptCapture(t)
	if out, _, code := run(t, nil, "decode", "-r", damaged, "-q"); code != ExitDamaged || out != "" {
		t.Errorf("-q on a damaged capture: exit %d, stdout %q", code, out)
	}
}
