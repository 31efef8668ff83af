package cli

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gdamore/tcell/v2"
	"github.com/klauspost/compress/zstd"
	"github.com/rocetap/rocetap/tui"
)

// TestTUIFlagErrors: what rocetap tui says, word for word, when its
// arguments cannot work; nothing is drawn.
func TestTUIFlagErrors(t *testing.T) {
	capf := td + "rxe/cm_rping.pcap"
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"no capture", []string{"tui"},
			"rocetap: no capture given: rocetap tui FILE, -r - for a stream, or -i IFACE to capture live\n"},
		{"file and interface", []string{"tui", "-r", capf, "-i", "eth0"},
			"rocetap: give a capture file or an interface (-i), not both\n"},
		{"argument and interface", []string{"tui", capf, "-i", "eth0"},
			"rocetap: give a capture file or an interface (-i), not both\n"},
		{"two files", []string{"tui", "a.pcap", "-r", "b.pcap"},
			"rocetap: two captures given (a.pcap and -r b.pcap): give one\n"},
		{"three arguments", []string{"tui", "a.pcap", "b.pcap"},
			"rocetap: accepts at most 1 arg(s), received 2\n"},
		{"bad -Y", []string{"tui", "-Y", "infiniband.bth.opcode ==", capf},
			"rocetap: filter: expression ends after \"==\": a value was expected at column 25\n" +
				"  infiniband.bth.opcode ==\n" +
				"                          ^\n"},
		{"unknown field in -Y", []string{"tui", capf, "-Y", "infiniband.bth.opcod == 1"},
			"rocetap: filter: unknown field \"infiniband.bth.opcod\" (did you mean infiniband.bth.opcode, infiniband.bth.psn, infiniband.bth.a?) at column 1\n" +
				"  infiniband.bth.opcod == 1\n" +
				"  ^~~~~~~~~~~~~~~~~~~~\n"},
		{"missing --mpt", []string{"tui", "--mpt", "/nonexistent/m.json", capf},
			"rocetap: --mpt: cannot read the MPT file: open /nonexistent/m.json: no such file or directory (give the path of the responder's MPT file)\n"},
		{"--mpt not JSON", []string{"tui", "--mpt", td + "rxe/README.md", capf},
			"rocetap: " + td + "rxe/README.md:1:2: JSON syntax error: invalid character '#' looking for beginning of value (rocetap help mpt-format describes the format)\n"},
		{"bad --page-size", []string{"tui", "--mpt", td + "rxe/err_bad_rkey.mpt.json", "--page-size", "100", capf},
			"rocetap: --page-size 100: want a power of two from 64 to 1073741824 bytes, e.g. 4096 or 2097152 (2 MiB huge pages)\n"},
		{"missing capture", []string{"tui", "/nonexistent/x.pcap"}, "rocetap: " + notACapture(t, "/nonexistent/x.pcap") + "\n"},
		{"unknown flag", []string{"tui", "--nosuch", capf},
			"rocetap: unknown flag: --nosuch\n"},
		{"not a capture", []string{"tui", td + "rxe/README.md"}, "rocetap: " + notACapture(t, td+"rxe/README.md") + "\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, errOut, code := run(t, nil, c.args...)
			if code != 1 || out != "" || errOut != c.want {
				t.Errorf("%v: exit %d, stdout %q\nstderr %q\nwant   %q", c.args, code, out, errOut, c.want)
			}
		})
	}
}

// recScreen is a simulation screen that keeps a copy of its text after
// every Show, made on the UI goroutine, so a test can read it while the
// UI draws.
type recScreen struct {
	tcell.SimulationScreen
	mu    sync.Mutex
	lines []string
}

// Init initializes the screen at 140x40 (tview initializes the screen it
// is given).
func (r *recScreen) Init() error {
	if err := r.SimulationScreen.Init(); err != nil {
		return err
	}
	r.SetSize(140, 40)
	return nil
}

func (r *recScreen) Show() {
	r.SimulationScreen.Show()
	r.record()
}

func (r *recScreen) Sync() {
	r.SimulationScreen.Sync()
	r.record()
}

func (r *recScreen) record() {
	lines := tui.ScreenLines(r.SimulationScreen)
	r.mu.Lock()
	r.lines = lines
	r.mu.Unlock()
}

func (r *recScreen) text() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return strings.Join(r.lines, "\n")
}

// tuiSession runs `rocetap tui` in-process on a simulation screen.
type tuiSession struct {
	t    *testing.T
	scr  *recScreen
	done chan error
}

func startTUI(t *testing.T, stdin []byte, args ...string) *tuiSession {
	t.Helper()
	sim := tcell.NewSimulationScreen("UTF-8")
	s := &tuiSession{t: t, scr: &recScreen{SimulationScreen: sim}, done: make(chan error, 1)}
	cmd := NewCmdTUI(IO{In: bytes.NewReader(stdin), Out: new(bytes.Buffer), ErrOut: new(bytes.Buffer)})
	// What the command's RunE does, with a simulation screen.
	opts := &TUIOptions{}
	if err := cmd.ParseFlags(args); err != nil {
		t.Fatal(err)
	}
	f := cmd.Flags()
	opts.Path, _ = f.GetString("read-file")
	opts.Filter, _ = f.GetString("display-filter")
	opts.MPT, _ = f.GetString("mpt")
	opts.Decode, _ = f.GetStringArray("decode-as")
	opts.Format, _ = f.GetString("format")
	opts.Time, _ = f.GetString("time-format")
	opts.Columns, _ = f.GetString("columns")
	opts.modelFlags.CacheEntries, _ = f.GetInt("cache-entries")
	opts.modelFlags.PageSize, _ = f.GetUint64("page-size")
	opts.MaxSessions, _ = f.GetInt("max-sessions")
	if rest := f.Args(); len(rest) == 1 {
		opts.Path = rest[0]
	}
	go func() {
		s.done <- tuiRun(opts, IO{In: bytes.NewReader(stdin)}, func(o *tui.Options) {
			o.Screen = s.scr
		})
	}()
	t.Cleanup(func() {
		select {
		case <-s.done:
			return
		default:
		}
		s.scr.InjectKey(tcell.KeyCtrlC, 0, tcell.ModNone) // a test that failed half-way
		select {
		case <-s.done:
		case <-time.After(5 * time.Second):
			t.Error("rocetap tui still running 5 s after Ctrl-C")
		}
	})
	return s
}

// wait waits until every text is on the screen.
func (s *tuiSession) wait(texts ...string) string {
	s.t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		scr := s.scr.text()
		all := true
		for _, t := range texts {
			all = all && strings.Contains(scr, t)
		}
		if all {
			return scr
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("waiting for %q; the screen shows:\n%s", texts, scr)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func (s *tuiSession) typ(text string) {
	for _, r := range text {
		s.scr.InjectKey(tcell.KeyRune, r, tcell.ModNone)
	}
}

func (s *tuiSession) quit() {
	s.t.Helper()
	s.typ("q")
	select {
	case err := <-s.done:
		s.done <- err
		if err != nil {
			s.t.Errorf("rocetap tui: %v", err)
		}
	case <-time.After(10 * time.Second):
		s.t.Fatal("rocetap tui did not quit on q")
	}
}

// TestTUIFile: rocetap tui FILE -Y EXPR opens the file with the filter
// applied to every packet (the index is built after the UI starts), and q
// ends it without an error.
func TestTUIFile(t *testing.T) {
	s := startTUI(t, nil, td+"rxe/cm_rping.pcap", "-Y", "infiniband.bth.opcode == 4")
	scr := s.wait("packets: 29", "shown: 8", "Frame 4:") // decode -Y selects 8 of the 29
	if !strings.Contains(scr, "Filter: infiniband.bth.opcode == 4") {
		t.Errorf("the filter bar does not show -Y:\n%s", scr)
	}
	if strings.Contains(scr, "Acknowledge") {
		t.Errorf("an Acknowledge is listed under a SEND Only filter:\n%s", scr)
	}
	s.quit()
}

// TestTUIStream: rocetap tui -r - shows a capture read from standard
// input.
func TestTUIStream(t *testing.T) {
	data, err := os.ReadFile(td + "rxe/cm_rping.pcap")
	if err != nil {
		t.Fatal(err)
	}
	s := startTUI(t, data, "-r", "-")
	s.wait("packets: 29", "Frame 1:", "stdin.cap")
	// "reading…" until the end of the stream, then nothing.
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		scr := s.scr.text()
		if strings.Contains(scr, "stopped") {
			t.Fatalf("a complete stream stopped:\n%s", scr)
		}
		if !strings.Contains(scr, "reading…") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a complete stream is still being read after 5 s:\n%s", scr)
		}
	}
	s.quit()
}

// TestTUIMPT: with --mpt the index's tracker checks every access against
// the MPT file, so the expert view has the MPT's findings.
func TestTUIMPT(t *testing.T) {
	s := startTUI(t, nil, td+"rxe/err_bad_rkey.pcap", "--mpt", td+"rxe/err_bad_rkey.mpt.json")
	s.wait("Frame 1:")
	s.typ("e")
	s.wait("Expert information", "mpt_violation", "MPT forbids the WRITE of 128 bytes")
	s.scr.InjectKey(tcell.KeyEscape, 0, tcell.ModNone)
	s.wait(" Packets ")
	s.quit()
}

// TestTUIInterfaceID: on a pcapng with three interfaces, the TUI's
// frame.interface_id is the one decode gives every frame, so -Y
// 'frame.interface_id == N' lists the frames decode -Y selects. (The TUI
// once built its frames without the interface: every frame was on
// interface 0.)
func TestTUIInterfaceID(t *testing.T) {
	capf := td + "synth/sll_sll2_raw.pcapng"
	row := regexp.MustCompile(`^║\s*(\d+)\s`)
	for iface := range 3 {
		expr := "frame.interface_id == " + strconv.Itoa(iface)
		t.Run(expr, func(t *testing.T) {
			out, errOut, code := run(t, nil, "decode", "-r", capf, "-Y", expr, "-T", "fields", "-e", "frame.number")
			want := strings.Fields(out)
			if code != 0 || len(want) != 2 {
				t.Fatalf("decode -Y %q: exit %d, frames %q, stderr %q: want 2 of the 6 frames", expr, code, want, errOut)
			}
			s := startTUI(t, nil, capf, "-Y", expr)
			var got []string
			deadline := time.Now().Add(5 * time.Second)
			for {
				scr := s.scr.text()
				got = got[:0]
				for _, l := range strings.Split(scr, "\n") {
					if m := row.FindStringSubmatch(l); m != nil {
						got = append(got, m[1])
					}
				}
				if strings.Contains(scr, "packets: 6  shown: 2 ") && slices.Equal(got, want) {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("tui -Y %q lists frames %q, decode -Y selects %q; the screen shows:\n%s", expr, got, want, scr)
				}
				time.Sleep(10 * time.Millisecond)
			}
			s.quit()
		})
	}
}

// TestTUICompressed: a gzip file and a zstd stream on stdin open in the
// TUI as their decompressed captures (the index reads packets back at
// their offsets, so the TUI spools the decompressed bytes).
func TestTUICompressed(t *testing.T) {
	data, err := os.ReadFile(td + "rxe/cm_rping.pcap")
	if err != nil {
		t.Fatal(err)
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(data)
	zw.Close()
	path := filepath.Join(t.TempDir(), "cm_rping.pcap.gz")
	if err := os.WriteFile(path, gz.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	s := startTUI(t, nil, path)
	s.wait("packets: 29", "Frame 1:", "cm_rping.pcap")
	s.typ("G") // the last packet reads back from its offset
	s.wait("Frame 29:")
	s.quit()

	var zs bytes.Buffer
	zsw, _ := zstd.NewWriter(&zs)
	zsw.Write(data)
	zsw.Close()
	s = startTUI(t, zs.Bytes(), "-r", "-")
	s.wait("packets: 29", "Frame 1:")
	s.quit()
}

// notACapture is decode's message for a file it cannot read as a
// capture (missing, empty, something else): the TUI's is the same.
func notACapture(t *testing.T, path string) string {
	_, errOut, _ := run(t, nil, "decode", "-r", path)
	return strings.TrimSuffix(strings.TrimPrefix(errOut, "rocetap: "), "\n")
}

// TestTUIDecodeAs (issue 17): tui -d decodes another UDP port as RoCEv2,
// as decode -d does: in the list, the detail tree and the filters.
func TestTUIDecodeAs(t *testing.T) {
	capf := td + "synth/vlan_qinq_ipv6.pcap"
	s := startTUI(t, nil, capf, "-Y", "frame.number == 11")
	s.wait("shown: 1", "UDP", "50000 → 4792")
	s.quit()
	s = startTUI(t, nil, capf, "-d", "udp.port==4792,infiniband", "-Y", "infiniband.bth.opcode == 9")
	s.wait("shown: 1", "RoCEv2", "RC RDMA Write Last Immediate")
	s.quit()
}

// TestTUIFormat (issue 17): tui --format is decode's: forced to ERF the
// file reads as decode reads it; forced to a format it is not, the TUI
// refuses it with decode's message before it opens.
func TestTUIFormat(t *testing.T) {
	erf := filepath.Join(t.TempDir(), "capture.dat") // no .erf in the name
	data, err := os.ReadFile("../../capture/testdata/read_atomic.erf")
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(erf, data, 0o644)
	want, _, code := run(t, nil, "decode", "-r", erf, "--format", "erf")
	if code != 0 {
		t.Fatalf("decode --format erf: exit %d", code)
	}
	s := startTUI(t, nil, erf, "--format", "erf")
	s.wait(fmt.Sprintf("packets: %d", strings.Count(want, "\n")), "Frame 1:")
	s.quit()
	_, decodeErr, _ := run(t, nil, "decode", "-r", erf, "--format", "pcapng")
	_, tuiErr, code := run(t, nil, "tui", erf, "--format", "pcapng")
	if code != ExitInput || tuiErr != decodeErr {
		t.Errorf("tui --format pcapng on ERF: exit %d, %q; decode says %q", code, tuiErr, decodeErr)
	}
}

// TestTUITimeFormat (issue 17): tui -t shows the Time column as decode -t
// shows it.
func TestTUITimeFormat(t *testing.T) {
	t.Setenv("TZ", "UTC")
	capf := td + "rxe/read_atomic.pcap"
	for _, tf := range []string{"ud", "e", "dd"} {
		out, _, _ := run(t, nil, "decode", "-r", capf, "-t", tf, "-Y", "infiniband.bth.opcode == 16")
		f := strings.Fields(strings.Split(out, "\n")[1]) // the second packet shown
		want := f[1]
		if tf == "ud" {
			want = f[1] + " " + f[2]
		}
		s := startTUI(t, nil, capf, "-t", tf, "-Y", "infiniband.bth.opcode == 16")
		s.wait("shown: 3", want)
		s.quit()
	}
}

// TestTUIColumns (issue 17): --columns chooses, orders and adds the
// list's columns (any field, as -T fields prints it); a name that is no
// column nor field is refused before the UI opens.
func TestTUIColumns(t *testing.T) {
	capf := td + "rxe/read_atomic.pcap"
	s := startTUI(t, nil, capf, "--columns", "no,infiniband.bth.psn,infiniband.reth.va,info")
	scr := s.wait("No. infiniband.bth.psn infiniband.reth.va Info", "0x000055555557b000 RC RDMA Read Request")
	if strings.Contains(scr, "Source") || strings.Contains(scr, "Protocol") {
		t.Errorf("columns not asked for are shown:\n%s", scr)
	}
	s.quit()
	_, errOut, code := run(t, nil, "tui", capf, "--columns", "no,nosuch")
	if code != ExitInput || !strings.Contains(errOut, `"nosuch" is neither a column`) {
		t.Errorf("exit %d: %s", code, errOut)
	}
}
