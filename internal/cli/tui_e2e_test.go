package cli

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rocetap/rocetap/internal/testcap"
)

// tmuxPane drives one tmux session on its own server socket.
type tmuxPane struct {
	t      *testing.T
	socket string
	name   string
}

func (p *tmuxPane) tmux(args ...string) (string, error) {
	out, err := exec.Command("tmux", append([]string{"-L", p.socket}, args...)...).CombinedOutput()
	return string(out), err
}

// send sends tmux key names (Enter, Escape, Down, C-u) or literal text
// (with -l).
func (p *tmuxPane) send(keys ...string) {
	p.t.Helper()
	if out, err := p.tmux(append([]string{"send-keys", "-t", p.name}, keys...)...); err != nil {
		p.t.Fatalf("tmux send-keys %q: %v\n%s", keys, err, out)
	}
}

func (p *tmuxPane) text(s string) { p.send("-l", s) }

func (p *tmuxPane) capture() string {
	p.t.Helper()
	out, err := p.tmux("capture-pane", "-p", "-t", p.name)
	if err != nil {
		p.t.Fatalf("tmux capture-pane: %v\n%s", err, out)
	}
	return out
}

// wait waits until every text is in the pane.
func (p *tmuxPane) wait(texts ...string) string {
	p.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		pane := p.capture()
		all := true
		for _, t := range texts {
			all = all && strings.Contains(pane, t)
		}
		if all {
			return pane
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("waiting for %q; the pane shows:\n%s", texts, pane)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// buildRocetap builds cmd/rocetap into a temporary directory.
func buildRocetap(t *testing.T) string {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to build rocetap")
	}
	bin := filepath.Join(t.TempDir(), "rocetap")
	if out, err := exec.Command(goBin, "build", "-o", bin, "github.com/rocetap/rocetap/cmd/rocetap").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// startTmux runs command in a new 160x45 tmux session on a server of its
// own (the pane stays if the command exits early: remain-on-exit). The
// server is killed at the end of the test.
func startTmux(t *testing.T, command string) *tmuxPane {
	t.Helper()
	testcap.Tool(t, "tmux", "install it with `apt-get install -y tmux` (.ci/run does)")
	p := &tmuxPane{t: t, socket: fmt.Sprintf("rocetap-e2e-%d-%d", os.Getpid(), time.Now().UnixNano()), name: "tui"}
	t.Cleanup(func() { p.tmux("kill-server") })
	// TERM for the pane; the server must not read the user's tmux.conf.
	out, err := p.tmux("-f", "/dev/null", "new-session", "-d", "-s", p.name, "-x", "160", "-y", "45", "-e", "TERM=screen-256color",
		command, ";", "set-option", "-t", p.name, "remain-on-exit", "on")
	if err != nil {
		t.Fatalf("tmux new-session: %v\n%s", err, out)
	}
	return p
}

// TestTUIEndToEnd runs rocetap tui in a real terminal (a tmux pane),
// types as a user would and reads the pane: the list is shown, a filter
// filters, a session's packets and its ladder open, an expert event goes
// to its frame, and q ends the program with status 0 and the terminal
// restored.
func TestTUIEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("builds rocetap and runs it under tmux (-short)")
	}
	bin := buildRocetap(t)
	capf, err := filepath.Abs(td + "rxe/err_psn_seq.pcap")
	if err != nil {
		t.Fatal(err)
	}
	// The shell prints the exit status where the UI was, then stays (tmux
	// clears a dead pane).
	p := startTmux(t, fmt.Sprintf(`sh -c '%s tui %s; echo "rocetap exited: $?"; sleep 60'`, bin, capf))

	pane := p.wait("err_psn_seq.pcap  packets: 4", "Frame 1: 138 bytes on wire")
	for _, want := range []string{"No.", "Protocol", "RC RDMA Write Only", "NAK PSN Sequence Error", "  4 0.040580", " Details ", " Bytes ", "Filter:"} {
		if !strings.Contains(pane, want) {
			t.Errorf("the first screen lacks %q:\n%s", want, pane)
		}
	}

	// A display filter: only the NAK (opcode 17, Acknowledge).
	p.send("/")
	p.text("infiniband.bth.opcode == 17")
	p.send("Enter")
	pane = p.wait("shown: 1", "Frame 2: 62 bytes on wire")
	if strings.Contains(pane, "RDMA Write Only QP") {
		t.Errorf("the filter shows a WRITE:\n%s", pane)
	}
	// An invalid one is refused with the reason.
	p.send("/", "C-u")
	p.text("infiniband.bth.opcode ==")
	p.wait("filter: ", "a value was expected")
	p.send("C-u", "Enter")
	p.wait("packets: 4  ?")

	// The session's packets, then its ladder if this build has one.
	p.send("s")
	p.wait(" Sessions ", "10.77.0.1/0x000035", "10.77.0.2/0x000034")
	p.send("Enter")
	p.wait("rocetap.session.id == 1", "shown: 4")
	p.send("?")
	help := p.wait("rocetap tui keys")
	p.send("Escape")
	if strings.Contains(help, "ladder") {
		p.send("s")
		p.wait(" Sessions ")
		p.send("l")
		p.wait("Ladder: session 1")
		p.send("Escape")
	}

	// The retransmission in frame 3 goes to its frame. The view groups the
	// events as rocetap expert does: NAK (heading, frame 2), the
	// requester giving up (heading, at the end), retransmissions
	// (heading, frame 3, frame 4): frame 3 is the sixth row.
	p.send("e")
	p.wait(" Expert information ", "NAK PSN Sequence Error", "Retransmission of PSN 6144")
	p.send("Down", "Down", "Down", "Down", "Down", "Enter")
	p.wait("Frame 3: 138 bytes on wire", " Packets ")

	p.send("q")
	pane = p.wait("rocetap exited: ")
	if !strings.Contains(pane, "rocetap exited: 0") {
		t.Errorf("rocetap tui did not exit with status 0:\n%s", pane)
	}
	// The terminal is given back: the alternate screen is gone, nothing of
	// the UI stays in the pane.
	if strings.Contains(pane, "Packets") || strings.Contains(pane, "Filter:") {
		t.Errorf("the UI is still in the pane after exiting:\n%s", pane)
	}
}

// TestTUIEndToEndFiles (issue 17): in a real terminal, w onto the open
// capture is refused and the file stays intact; SIGTERM to a TUI reading
// a stream gives the terminal back (alternate screen left, cursor shown)
// and removes the stream's spool.
func TestTUIEndToEndFiles(t *testing.T) {
	if testing.Short() {
		t.Skip("builds rocetap and runs it under tmux (-short)")
	}
	bin := buildRocetap(t)
	dir := t.TempDir()
	capf := filepath.Join(dir, "open.pcap")
	orig, err := os.ReadFile(td + "rxe/err_psn_seq.pcap")
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(capf, orig, 0o644)
	p := startTmux(t, fmt.Sprintf(`sh -c '%s tui %s; echo "rocetap exited: $?"; sleep 60'`, bin, capf))
	p.wait("open.pcap  packets: 4", "Frame 1:")
	p.send("w")
	p.wait("Write the shown packets to:")
	p.text(capf)
	p.send("Enter")
	p.wait("is the capture open here")
	if b, _ := os.ReadFile(capf); !bytes.Equal(b, orig) {
		t.Fatal("w onto the open capture changed it")
	}
	p.send("j")
	p.wait("Frame 2:")
	// / from the expert view shows the filter bar and filters.
	p.send("e")
	p.wait(" Expert information ")
	p.send("/")
	p.text("frame.number == 3")
	p.send("Enter")
	p.wait("shown: 1", "Frame 3:")
	p.send("q")
	p.wait("rocetap exited: 0")

	// SIGTERM, with a stream spooled in TMPDIR.
	tmp := t.TempDir()
	q := startTmux(t, fmt.Sprintf(`sh -c 'cat %s | TMPDIR=%s %s tui -r - & echo $! > %s/pid; wait; echo "rocetap exited: $?"; sleep 60'`, capf, tmp, bin, dir))
	q.wait("packets: 4", "Frame 1:")
	if spools, _ := filepath.Glob(filepath.Join(tmp, "rocetap-tui-*")); len(spools) != 1 {
		t.Fatalf("spools in TMPDIR: %v, want 1 while the UI runs", spools)
	}
	b, err := os.ReadFile(filepath.Join(dir, "pid"))
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	if err := syscall.Kill(pid, syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	pane := q.wait("rocetap exited: ")
	if strings.Contains(pane, "Packets") || strings.Contains(pane, "Filter:") {
		t.Errorf("the UI is still in the pane after SIGTERM:\n%s", pane)
	}
	if out, _ := q.tmux("display-message", "-p", "-t", q.name, "#{alternate_on} #{cursor_flag}"); strings.TrimSpace(string(out)) != "0 1" {
		t.Errorf("after SIGTERM: alternate_on, cursor_flag = %q, want 0 1 (terminal restored)", strings.TrimSpace(string(out)))
	}
	if spools, _ := filepath.Glob(filepath.Join(tmp, "rocetap-tui-*")); len(spools) != 0 {
		t.Errorf("the spool is left after SIGTERM: %v", spools)
	}
}

// TestTUIEndToEndLadderDeep (issue 17.2): in a real terminal, the ladder
// opened from a frame deep in a long session shows that frame, selected.
// gencap -qps 1 makes one session of 20,000 packets.
func TestTUIEndToEndLadderDeep(t *testing.T) {
	if testing.Short() {
		t.Skip("builds rocetap and runs it under tmux (-short)")
	}
	bin := buildRocetap(t)
	capf := filepath.Join(t.TempDir(), "long.pcap")
	if out, err := exec.Command("go", "run", "github.com/rocetap/rocetap/internal/tools/gencap", "-qps", "1", "-n", "20000", "-o", capf).CombinedOutput(); err != nil {
		t.Fatalf("gencap: %v\n%s", err, out)
	}
	p := startTmux(t, fmt.Sprintf(`sh -c '%s tui %s; echo "rocetap exited: $?"; sleep 60'`, bin, capf))
	p.wait("long.pcap  packets: 20000", "Frame 1:")
	p.send(":")
	p.text("15321")
	p.send("Enter")
	p.wait("Frame 15321:")
	p.send("l")
	// The frame's row is on the screen, and Enter goes to the frame
	// selected: 15321.
	p.wait("Ladder: session 1", "20000 packets", "║15321 ")
	p.send("Enter")
	p.wait("Frame 15321:", " Packets ")
	p.send("q")
	p.wait("rocetap exited: 0")
}
