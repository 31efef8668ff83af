//go:build linux

package cli

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rocetap/rocetap/capture"
	"github.com/rocetap/rocetap/internal/netnstest"
	"github.com/rocetap/rocetap/internal/testcap"
)

// syncBuf is a bytes.Buffer safe for the capture's status goroutine.
type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// readFrames reads every frame of a capture file.
func readFrames(t *testing.T, path string) [][]byte {
	t.Helper()
	r, err := capture.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var out [][]byte
	for {
		data, _, err := r.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatalf("%s after %d frames: %v", path, len(out), err)
		}
		out = append(out, bytes.Clone(data))
	}
}

// TestCaptureVeth runs `rocetap capture` in-process on one end of a veth
// pair while RoCE and other frames come from the other end; SIGINT stops
// it. Every RoCE frame is in the file, byte for byte; the summary shows
// them; the final statistics are printed; rocetap decode and tshark read
// the file.
func TestCaptureVeth(t *testing.T) {
	v := netnstest.New(t)
	path := filepath.Join(t.TempDir(), "live.pcapng")
	sigs := make(chan os.Signal, 1)
	var stdout, stderr syncBuf
	cmd := newCmdCapture(IO{Out: &stdout, ErrOut: &stderr}, func(o *CaptureOptions) error {
		o.signals = sigs
		o.open = func(lo capture.LiveOptions) (l capture.LiveSource, err error) {
			netnstest.In(t, v.NsB, func() { l, err = capture.OpenLive(lo) })
			return l, err
		}
		return captureRun(o, IO{Out: &stdout, ErrOut: &stderr})
	})
	cmd.SetArgs([]string{"-i", v.IfB, "-w", path, "-Y", "infiniband.bth.opcode == 17", "--backend", "afpacket"})
	cmd.SetOut(io.Discard)
	cmd.SetErr(io.Discard)
	done := make(chan error, 1)
	go func() { done <- cmd.Execute() }()

	var snd *netnstest.Sender
	netnstest.In(t, v.NsA, func() { snd = netnstest.NewSender(t, v.IfA) })
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(stderr.String(), "Capturing on") && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	const n = 2000
	frames := netnstest.RoCEFrames(t, n, 1000)
	arp := make([]byte, 60)
	arp[12], arp[13] = 0x08, 0x06
	for i := 0; i < n; i += 200 {
		if err := snd.SendAt([][]byte{arp}, 0); err != nil {
			t.Fatal(err)
		}
		if err := snd.SendAt(frames[i:i+200], 50000); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(150 * time.Millisecond)
	sigs <- syscall.SIGINT
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("capture: %v\nstderr: %s", err, stderr.String())
		}
	case <-time.After(5 * time.Second):
		t.Fatal("capture did not stop on SIGINT")
	}

	got := readFrames(t, path)
	if len(got) != n {
		t.Fatalf("the file holds %d frames, %d RoCE frames were sent; stderr:\n%s", len(got), n, stderr.String())
	}
	for i := range got {
		if !bytes.Equal(got[i], frames[i]) {
			t.Fatalf("frame %d differs from the one sent", i+1)
		}
	}
	// -Y: only the ACKs (opcode 17), numbered as in the file.
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	if len(lines) != n/2 || !strings.HasPrefix(strings.TrimSpace(lines[0]), "2 ") || !strings.Contains(lines[0], "RC Acknowledge") {
		t.Errorf("%d summary lines (want %d ACKs), first %q", len(lines), n/2, lines[0])
	}
	errOut := stderr.String()
	if !strings.Contains(errOut, strconv.Itoa(n)+" packets captured on "+v.IfB+", 0 dropped by the kernel (ring full), 0 dropped by the interface") {
		t.Errorf("final statistics missing or wrong:\n%s", errOut)
	}
	// rocetap decode reads the file.
	out, errs, code := run(t, nil, "decode", "-r", path, "-T", "fields", "-e", "infiniband.bth.psn", "-e", "rocetap.icrc.status")
	if code != 0 || strings.Count(out, "\tgood\n") != n {
		t.Errorf("rocetap decode -r %s: exit %d, %d good ICRCs of %d; %s", path, code, strings.Count(out, "\tgood\n"), n, errs)
	}
	if tshark := testcap.ToolPart(t, "tshark", testcap.InstallTshark); tshark != "" {
		out, err := exec.Command(tshark, "-r", path, "-T", "fields", "-e", "frame.number").Output()
		if err != nil || strings.Count(string(out), "\n") != n {
			t.Errorf("tshark -r %s: %v, %d frames", path, err, strings.Count(string(out), "\n"))
		}
	}
}

// TestCaptureSIGTERM kills a running `rocetap capture` process with
// SIGTERM while frames are coming: it exits 0, prints its final count,
// and the file holds exactly that many frames, the first ones sent, whole.
func TestCaptureSIGTERM(t *testing.T) {
	v := netnstest.New(t)
	dir := t.TempDir()
	bin := filepath.Join(dir, "rocetap")
	if out, err := exec.Command("go", "build", "-o", bin, "../../cmd/rocetap").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	path := filepath.Join(dir, "term.pcapng")
	var stderr syncBuf
	cmd := exec.Command("ip", "netns", "exec", v.NsB, bin, "capture", "-i", v.IfB, "-w", path, "-q", "--stats-every", "0.1")
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(stderr.String(), "Capturing on") && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	var snd *netnstest.Sender
	netnstest.In(t, v.NsA, func() { snd = netnstest.NewSender(t, v.IfA) })
	frames := netnstest.RoCEFrames(t, 20000, 0)
	stop := make(chan struct{})
	sent := make(chan int, 1)
	go func() {
		i := 0
		defer func() { sent <- i }()
		for ; i < len(frames); i += 100 {
			select {
			case <-stop:
				return
			default:
			}
			if snd.SendAt(frames[i:i+100], 20000) != nil {
				return
			}
		}
	}()
	time.Sleep(300 * time.Millisecond) // mid-stream
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	close(stop)
	nSent := <-sent
	if err != nil {
		t.Fatalf("rocetap capture after SIGTERM: %v\n%s", err, stderr.String())
	}
	m := regexp.MustCompile(`(\d+) packets captured on`).FindStringSubmatch(stderr.String())
	if m == nil {
		t.Fatalf("no final count:\n%s", stderr.String())
	}
	counted, _ := strconv.Atoi(m[1])
	if !regexp.MustCompile(`(?m)^packets \d+, bytes \d+, \d+ packets/s, ring-full drops 0, interface drops 0$`).MatchString(stderr.String()) {
		t.Errorf("no --stats-every status line:\n%s", stderr.String())
	}
	got := readFrames(t, path)
	if len(got) != counted || counted == 0 || counted >= len(frames) {
		t.Fatalf("the file holds %d frames, rocetap counted %d (of %d sent before the stop)", len(got), counted, nSent)
	}
	for i := range got {
		if !bytes.Equal(got[i], frames[i]) {
			t.Fatalf("frame %d differs from the one sent", i+1)
		}
	}
	t.Logf("SIGTERM after %d frames captured (%d sent): the file holds all of them", counted, nSent)
}

// TestCaptureStops: -c, -a duration and -w - on a veth pair.
func TestCaptureStops(t *testing.T) {
	v := netnstest.New(t)
	var snd *netnstest.Sender
	netnstest.In(t, v.NsA, func() { snd = netnstest.NewSender(t, v.IfA) })
	frames := netnstest.RoCEFrames(t, 400, 7)
	// start runs `rocetap capture ARGS` in-process in the B namespace
	// and returns a function that waits for it, with its stdout and
	// stderr.
	start := func(args ...string) func() (string, string, error) {
		var stdout, stderr syncBuf
		cmd := newCmdCapture(IO{Out: &stdout, ErrOut: &stderr}, func(o *CaptureOptions) error {
			o.signals = make(chan os.Signal)
			o.open = func(lo capture.LiveOptions) (l capture.LiveSource, err error) {
				netnstest.In(t, v.NsB, func() { l, err = capture.OpenLive(lo) })
				return l, err
			}
			return captureRun(o, IO{Out: &stdout, ErrOut: &stderr})
		})
		cmd.SetArgs(append([]string{"-i", v.IfB}, args...))
		cmd.SetOut(io.Discard)
		cmd.SetErr(io.Discard)
		done := make(chan error, 1)
		go func() { done <- cmd.Execute() }()
		deadline := time.Now().Add(5 * time.Second)
		for !strings.Contains(stderr.String(), "Capturing on") && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
		}
		return func() (string, string, error) {
			select {
			case err := <-done:
				return stdout.String(), stderr.String(), err
			case <-time.After(10 * time.Second):
				t.Fatal("the capture did not stop")
				return "", "", nil
			}
		}
	}
	t.Run("-c", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "c.pcapng")
		wait := start("-c", "25", "-w", path, "-q")
		if err := snd.SendAt(frames[:100], 20000); err != nil {
			t.Fatal(err)
		}
		_, errOut, err := wait()
		if err != nil {
			t.Fatal(err)
		}
		if got := readFrames(t, path); len(got) != 25 || !bytes.Equal(got[24], frames[24]) {
			t.Errorf("-c 25: the file holds %d frames; stderr %s", len(got), errOut)
		}
	})
	t.Run("-a duration", func(t *testing.T) {
		t0 := time.Now()
		wait := start("-a", "duration:1", "-q")
		_, errOut, err := wait()
		if d := time.Since(t0); err != nil || d < time.Second || d > 3*time.Second {
			t.Errorf("-a duration:1 stopped after %v: %v; %s", d, err, errOut)
		}
		if !strings.Contains(errOut, "0 packets captured on "+v.IfB) {
			t.Errorf("final statistics: %s", errOut)
		}
	})
	t.Run("-w -", func(t *testing.T) {
		wait := start("-w", "-", "-c", "40")
		if err := snd.SendAt(frames[:40], 20000); err != nil {
			t.Fatal(err)
		}
		out, errOut, err := wait()
		if err != nil {
			t.Fatal(err)
		}
		r, err := capture.NewReader(strings.NewReader(out))
		if err != nil {
			t.Fatalf("stdout is not a capture: %v; stderr %s", err, errOut)
		}
		n := 0
		for ; ; n++ {
			data, _, err := r.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(data, frames[n]) {
				t.Fatalf("frame %d of the stream differs", n+1)
			}
		}
		if n != 40 || r.Format() != "pcap-ns" {
			t.Errorf("the stream holds %d frames (%s), want 40 in pcap", n, r.Format())
		}
	})
}

// TestTUILive runs `rocetap tui -i` in a tmux pane inside a network
// namespace while RoCE frames arrive on its veth end: the packets appear
// as they come (the list follows the end), the status line shows the
// live counters, and q stops the capture and exits 0.
func TestTUILive(t *testing.T) {
	if testing.Short() {
		t.Skip("builds rocetap and runs it under tmux (-short)")
	}
	v := netnstest.New(t)
	bin := buildRocetap(t)
	p := startTmux(t, fmt.Sprintf(`sh -c 'ip netns exec %s %s tui -i %s; echo "rocetap exited: $?"; sleep 60'`, v.NsB, bin, v.IfB))
	p.wait("live " + v.IfB + ": 0 packets")
	var snd *netnstest.Sender
	netnstest.In(t, v.NsA, func() { snd = netnstest.NewSender(t, v.IfA) })
	frames := netnstest.RoCEFrames(t, 30, 500)
	if err := snd.SendAt(frames, 1000); err != nil {
		t.Fatal(err)
	}
	pane := p.wait("packets: 30", "live "+v.IfB+": 30 packets", "RC RDMA Write Only QP=0x000011 PSN=528", "RC Acknowledge QP=0x000012 PSN=528")
	if !strings.Contains(pane, "0 dropped by the kernel") {
		t.Errorf("no drop count in the status line:\n%s", pane)
	}
	p.send("q") // a live capture would be lost: rocetap asks
	p.wait("Quit? The live capture stops. (y/N)")
	p.send("y", "Enter")
	p.wait("rocetap exited: 0")
}

// TestCaptureAutostopVeth: -a packets:N and -a filesize:KB end a live
// capture by themselves (no signal), exit 0, and leave a complete file:
// N packets, or as many as fit in KB kB.
func TestCaptureAutostopVeth(t *testing.T) {
	v := netnstest.New(t)
	for _, tc := range []struct {
		args  []string
		check func(n int, size int64) bool
	}{
		{[]string{"-a", "packets:300"}, func(n int, _ int64) bool { return n == 300 }},
		{[]string{"-a", "filesize:100"}, func(n int, size int64) bool { return n > 10 && n < 2000 && size <= 100000 }},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "live.pcapng")
			var stdout, stderr syncBuf
			cmd := newCmdCapture(IO{Out: &stdout, ErrOut: &stderr}, func(o *CaptureOptions) error {
				o.signals = make(chan os.Signal) // never: the capture must stop itself
				o.open = func(lo capture.LiveOptions) (l capture.LiveSource, err error) {
					netnstest.In(t, v.NsB, func() { l, err = capture.OpenLive(lo) })
					return l, err
				}
				return captureRun(o, IO{Out: &stdout, ErrOut: &stderr})
			})
			cmd.SetArgs(append([]string{"-i", v.IfB, "-w", path, "-q", "--backend", "afpacket"}, tc.args...))
			cmd.SetOut(io.Discard)
			cmd.SetErr(io.Discard)
			done := make(chan error, 1)
			go func() { done <- cmd.Execute() }()
			var snd *netnstest.Sender
			netnstest.In(t, v.NsA, func() { snd = netnstest.NewSender(t, v.IfA) })
			for deadline := time.Now().Add(5 * time.Second); !strings.Contains(stderr.String(), "Capturing on") && time.Now().Before(deadline); {
				time.Sleep(10 * time.Millisecond)
			}
			frames := netnstest.RoCEFrames(t, 2000, 1)
			if err := snd.SendAt(frames, 50000); err != nil {
				t.Fatal(err)
			}
			select {
			case err := <-done:
				if err != nil {
					t.Fatalf("capture: %v\nstderr: %s", err, stderr.String())
				}
			case <-time.After(5 * time.Second):
				t.Fatalf("%v did not stop the capture; stderr: %s", tc.args, stderr.String())
			}
			got := readFrames(t, path)
			st, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			if !tc.check(len(got), st.Size()) {
				t.Errorf("%v: the file holds %d frames in %d bytes", tc.args, len(got), st.Size())
			}
			for i := range got {
				if !bytes.Equal(got[i], frames[i]) {
					t.Fatalf("frame %d differs from the one sent", i+1)
				}
			}
		})
	}
}

// TestCaptureStuckReader: `rocetap capture -w - | reader that never
// reads` ends within a second of SIGTERM (and of SIGINT), though its
// writes block on the full pipe: it says how many packets reached the
// pipe and exits with status 4. The real binary runs in the veth pair's
// namespace; the frames come from the other end.
func TestCaptureStuckReader(t *testing.T) {
	v := netnstest.New(t)
	bin := buildRocetap(t)
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			pr, pw, err := os.Pipe() // nobody reads pr
			if err != nil {
				t.Fatal(err)
			}
			defer pr.Close()
			var stderr syncBuf
			cmd := exec.Command("ip", "netns", "exec", v.NsB, bin, "capture", "-i", v.IfB, "-w", "-", "--backend", "afpacket")
			cmd.Stdout, cmd.Stderr = pw, &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			pw.Close()
			waited := make(chan error, 1)
			go func() { waited <- cmd.Wait() }()
			for deadline := time.Now().Add(5 * time.Second); !strings.Contains(stderr.String(), "Capturing on"); time.Sleep(10 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatalf("capture did not start: %s", stderr.String())
				}
			}
			var snd *netnstest.Sender
			netnstest.In(t, v.NsA, func() { snd = netnstest.NewSender(t, v.IfA) })
			// 3 MB: more than the pipe (64 KiB) and the sink's buffer (1 MiB).
			if err := snd.SendAt(netnstest.RoCEFrames(t, 3000, 1), 100000); err != nil {
				t.Fatal(err)
			}
			time.Sleep(300 * time.Millisecond)
			start := time.Now()
			// ip netns exec runs rocetap as its child: signal rocetap.
			signalChild(t, cmd.Process.Pid, sig)
			select {
			case err := <-waited:
				took := time.Since(start)
				var ee *exec.ExitError
				if !errors.As(err, &ee) || ee.ExitCode() != ExitOutput {
					t.Errorf("exit: %v, want status %d; stderr:\n%s", err, ExitOutput, stderr.String())
				}
				if took > time.Second {
					t.Errorf("rocetap took %v to exit after %v", took, sig)
				}
				if !strings.Contains(stderr.String(), "the output is not taking packets") || !strings.Contains(stderr.String(), "reached standard output") {
					t.Errorf("stderr does not say what happened:\n%s", stderr.String())
				}
				t.Logf("exited %v after %v: %s", took.Round(time.Millisecond), sig, strings.TrimSpace(stderr.String()))
			case <-time.After(5 * time.Second):
				cmd.Process.Kill()
				t.Fatalf("rocetap still runs 5 s after %v; stderr:\n%s", sig, stderr.String())
			}
		})
	}
}

// signalChild sends sig to the rocetap that `ip netns exec` (pid) runs:
// its child, or pid itself when ip exec'd it.
func signalChild(t *testing.T, pid int, sig syscall.Signal) {
	t.Helper()
	target := pid
	if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", pid, pid)); err == nil {
		if f := strings.Fields(string(b)); len(f) > 0 {
			target, _ = strconv.Atoi(f[0])
		}
	}
	if err := syscall.Kill(target, sig); err != nil {
		t.Fatal(err)
	}
}

// TestCaptureDiskFullSummary (issue 18.7): when the disk fills, the final
// line says how many packets were captured and how many the file holds.
func TestCaptureDiskFullSummary(t *testing.T) {
	v := netnstest.New(t)
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size=64k"); err != nil {
		t.Skipf("cannot mount a tmpfs (%v)", err)
	}
	defer syscall.Unmount(dir, 0)
	path := filepath.Join(dir, "full.pcapng")
	var stdout, stderr syncBuf
	cmd := newCmdCapture(IO{Out: &stdout, ErrOut: &stderr}, func(o *CaptureOptions) error {
		o.signals = make(chan os.Signal)
		o.open = func(lo capture.LiveOptions) (l capture.LiveSource, err error) {
			netnstest.In(t, v.NsB, func() { l, err = capture.OpenLive(lo) })
			return l, err
		}
		return captureRun(o, IO{Out: &stdout, ErrOut: &stderr})
	})
	cmd.SetArgs([]string{"-i", v.IfB, "-w", path, "-q", "--backend", "afpacket"})
	cmd.SetOut(io.Discard)
	cmd.SetErr(io.Discard)
	done := make(chan error, 1)
	go func() { done <- cmd.Execute() }()
	for deadline := time.Now().Add(5 * time.Second); !strings.Contains(stderr.String(), "Capturing on") && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	var snd *netnstest.Sender
	netnstest.In(t, v.NsA, func() { snd = netnstest.NewSender(t, v.IfA) })
	if err := snd.SendAt(netnstest.RoCEFrames(t, 3000, 1), 50000); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "no space left") {
			t.Fatalf("capture: %v, want a full-disk error", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the capture did not stop on a full disk")
	}
	held := len(readFrames(t, path))
	want := fmt.Sprintf("; %d of them are in %s (writing failed after them)", held, path)
	if !strings.Contains(stderr.String(), want) || !regexp.MustCompile(`\d+ packets captured on `).MatchString(stderr.String()) {
		t.Errorf("the final line does not say what the file holds (%d packets):\n%s", held, stderr.String())
	}
}
