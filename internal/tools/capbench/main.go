//go:build linux

// Command capbench measures live capture under load: on a veth pair
// between two network namespaces it makes itself (root only; nothing
// leaves them), it sends RoCEv2 frames at increasing rates from one end
// while a capture tool writes the other end's traffic to a file on tmpfs,
// and reports, per tool and frame size, the highest rate at which the file
// held every frame sent, with the CPU the tool used. Tools: rocetap
// capture, and dumpcap (Wireshark's capture engine, which tshark -i runs).
//
//	sudo go run ./internal/tools/capbench -rocetap bin/rocetap -o bench/out/capbench.md
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/rocetap/rocetap/capture"
	"github.com/rocetap/rocetap/internal/netnstest"
)

type trial struct {
	rate     int     // asked
	sentRate float64 // achieved
	sent     int
	got      int
	cpu      time.Duration
	backlog  uint64 // frames the kernel dropped before any capture saw them (softnet backlog full)
}

type tool struct {
	name string
	args func(iface, file string) []string
}

func main() {
	rocetap := flag.String("rocetap", "bin/rocetap", "rocetap binary")
	out := flag.String("o", "", "write the markdown report here (default stdout)")
	secs := flag.Float64("secs", 1, "seconds of traffic per trial")
	ratesFlag := flag.String("rates", "25000,50000,100000,150000,200000,250000,300000,350000,400000,0", "send rates to try, packets/s (0: as fast as the sender goes)")
	dir := flag.String("dir", "/dev/shm", "where the capture files go (tmpfs, so the disk is not the limit)")
	flag.Parse()
	if err := run(*rocetap, *out, *secs, *ratesFlag, *dir); err != nil {
		fmt.Fprintln(os.Stderr, "capbench:", err)
		if errors.Is(err, netnstest.ErrUnsupported) {
			os.Exit(3)
		}
		os.Exit(1)
	}
}

func run(rocetap, out string, secs float64, ratesFlag, dir string) error {
	var rates []int
	for _, r := range strings.Split(ratesFlag, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(r))
		if err != nil || n < 0 {
			return fmt.Errorf("-rates %q: want packets/s numbers separated by commas", ratesFlag)
		}
		rates = append(rates, n)
	}
	bin, err := filepath.Abs(rocetap)
	if err != nil {
		return err
	}
	tools := []tool{{"rocetap capture", func(iface, file string) []string {
		return []string{bin, "capture", "-i", iface, "-w", file, "-q"}
	}}}
	if p, err := exec.LookPath("dumpcap"); err == nil {
		tools = append(tools, tool{"dumpcap", func(iface, file string) []string {
			return []string{p, "-i", iface, "-f", "udp dst port 4791 or ether proto 0x8915", "-w", file, "-q"}
		}})
	} else {
		fmt.Fprintln(os.Stderr, "capbench: dumpcap not found (Debian package wireshark-common, installed with tshark): rocetap only")
	}
	pair, remove, err := netnstest.Create()
	if err != nil {
		return err
	}
	defer remove()
	var snd *netnstest.Sender
	if err := netnstest.Enter(pair.NsA, func() (err error) { snd, err = netnstest.OpenSender(pair.IfA); return err }); err != nil {
		return err
	}
	defer snd.Close()

	var b strings.Builder
	fmt.Fprintf(&b, "| tool | frames | highest loss-free rate (packets/s) | CPU s per million packets there | first loss (sent rate: captured / sent; dropped by the kernel before any capture) |\n|---|---|---:|---:|---|\n")
	for _, kind := range []struct {
		name string
		k    int
	}{{"64-byte ACKs", netnstest.ACKs}, {"1 KiB WRITEs (1082 bytes)", netnstest.Writes}} {
		for _, tl := range tools {
			var best *trial
			var firstLoss *trial
			for _, rate := range rates {
				n := int(secs * float64(max(rate, 400000)))
				if rate > 0 {
					n = int(secs * float64(rate))
				}
				frames, err := netnstest.Frames(kind.k, n, 0)
				if err != nil {
					return err
				}
				tr, err := runTrial(pair, snd, tl, frames, rate, dir)
				if err != nil {
					return fmt.Errorf("%s, %s at %d/s: %w", tl.name, kind.name, rate, err)
				}
				fmt.Fprintf(os.Stderr, "capbench: %s, %s, asked %d/s: sent %d at %.0f/s, captured %d, CPU %.2fs, softnet backlog drops %d\n",
					tl.name, kind.name, rate, tr.sent, tr.sentRate, tr.got, tr.cpu.Seconds(), tr.backlog)
				if tr.got == tr.sent {
					best = tr
					continue
				}
				firstLoss = tr
				break
			}
			row := fmt.Sprintf("| %s | %s | ", tl.name, kind.name)
			if best != nil {
				row += fmt.Sprintf("%.0f | %.2f | ", best.sentRate, best.cpu.Seconds()/float64(best.sent)*1e6)
			} else {
				row += "none | | "
			}
			if firstLoss != nil {
				row += fmt.Sprintf("%.0f/s: %d / %d; %d |", firstLoss.sentRate, firstLoss.got, firstLoss.sent, firstLoss.backlog)
			} else {
				row += "none up to the sender's top rate |"
			}
			fmt.Fprintln(&b, row)
		}
	}
	if out == "" {
		_, err = io.WriteString(os.Stdout, b.String())
		return err
	}
	return os.WriteFile(out, []byte(b.String()), 0o644)
}

// runTrial starts tl capturing on the pair's B end, sends frames at rate,
// stops tl with SIGINT and counts the frames in its file.
func runTrial(pair *netnstest.Pair, snd *netnstest.Sender, tl tool, frames [][]byte, rate int, dir string) (*trial, error) {
	file := filepath.Join(dir, fmt.Sprintf("capbench-%d.pcapng", os.Getpid()))
	defer os.Remove(file)
	args := append([]string{"netns", "exec", pair.NsB}, tl.args(pair.IfB, file)...)
	cmd := exec.Command("ip", args...)
	var stderr lockedBuf
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(stderr.String(), "Capturing on") {
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			cmd.Wait()
			return nil, fmt.Errorf("the tool did not start capturing: %s", stderr.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(200 * time.Millisecond)
	backlog0 := softnetDrops()
	start := time.Now()
	if err := snd.SendAt(frames, rate); err != nil {
		cmd.Process.Kill()
		cmd.Wait()
		return nil, err
	}
	sentRate := float64(len(frames)) / time.Since(start).Seconds()
	time.Sleep(500 * time.Millisecond)
	cmd.Process.Signal(syscall.SIGINT)
	if err := cmd.Wait(); err != nil {
		return nil, fmt.Errorf("%v: %s", err, stderr.String())
	}
	got, err := countFrames(file)
	if err != nil {
		return nil, err
	}
	st := cmd.ProcessState
	return &trial{rate: rate, sentRate: sentRate, sent: len(frames), got: got, cpu: st.UserTime() + st.SystemTime(),
		backlog: softnetDrops() - backlog0}, nil
}

// softnetDrops sums the second column of /proc/net/softnet_stat: frames
// dropped because a CPU's input backlog was full (netdev_max_backlog),
// before any packet socket saw them. A veth pair's frames go through it.
func softnetDrops() uint64 {
	b, err := os.ReadFile("/proc/net/softnet_stat")
	if err != nil {
		return 0
	}
	var n uint64
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		f := strings.Fields(line)
		if len(f) > 1 {
			v, _ := strconv.ParseUint(f[1], 16, 64)
			n += v
		}
	}
	return n
}

func countFrames(path string) (int, error) {
	r, err := capture.Open(path)
	if err != nil {
		return 0, err
	}
	defer r.Close()
	n := 0
	for {
		_, _, err := r.Next()
		if errors.Is(err, io.EOF) {
			return n, nil
		}
		if err != nil {
			return n, err
		}
		n++
	}
}

type lockedBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuf) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
