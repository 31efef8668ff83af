//go:build linux

// Package netnstest makes network namespaces joined by a veth pair for
// tests of live capture, and sends raw frames into them. Everything it
// makes lives inside the namespaces it creates and is removed when the
// test ends; tests skip with the reason when the machine cannot (not
// root, no ip command).
package netnstest

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/rocetap/rocetap/decode"
	"github.com/rocetap/rocetap/internal/synth"
	"golang.org/x/sys/unix"
)

// Pair is two network namespaces joined by a veth pair, made for one
// test and removed after it. Nothing in them has a route outside.
type Pair struct {
	NsA, NsB string // namespace names (ip netns)
	IfA, IfB string // the veth ends, IfA in NsA, IfB in NsB
}

// New makes the namespaces and the pair, or skips the test with
// the reason when it cannot (not root, no ip command, no netns support).
func New(t testing.TB) *Pair {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("live capture tests need root (network namespaces, AF_PACKET): run as root, as CI does")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skip("live capture tests need the ip command (Debian package iproute2)")
	}
	id := fmt.Sprintf("%d%d", os.Getpid()%100000, time.Now().UnixNano()%1000)
	v := &Pair{NsA: "rtapA" + id, NsB: "rtapB" + id, IfA: "rta" + id, IfB: "rtb" + id}
	run := func(args ...string) error {
		out, err := exec.Command("ip", args...).CombinedOutput()
		if err != nil {
			return fmt.Errorf("ip %s: %v: %s", strings.Join(args, " "), err, out)
		}
		return nil
	}
	if err := run("netns", "add", v.NsA); err != nil {
		t.Skipf("cannot make a network namespace here: %v", err)
	}
	t.Cleanup(func() { run("netns", "del", v.NsA) })
	if err := run("netns", "add", v.NsB); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { run("netns", "del", v.NsB) })
	for _, args := range [][]string{
		{"link", "add", v.IfA, "netns", v.NsA, "type", "veth", "peer", "name", v.IfB, "netns", v.NsB},
		// No IPv6 on the pair: no neighbour discovery or router
		// solicitations in the capture.
		{"-n", v.NsA, "link", "set", "lo", "up"},
		{"-n", v.NsB, "link", "set", "lo", "up"},
	} {
		if err := run(args...); err != nil {
			t.Fatal(err)
		}
	}
	for _, ns := range []string{v.NsA, v.NsB} {
		if out, err := exec.Command("ip", "netns", "exec", ns, "sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1", "net.ipv6.conf.default.disable_ipv6=1").CombinedOutput(); err != nil {
			t.Logf("disabling IPv6 in %s: %v: %s", ns, err, out)
		}
	}
	for _, args := range [][]string{{"-n", v.NsA, "link", "set", v.IfA, "up"}, {"-n", v.NsB, "link", "set", v.IfB, "up"}} {
		if err := run(args...); err != nil {
			t.Fatal(err)
		}
	}
	return v
}

// In runs fn on a thread inside network namespace ns: sockets fn opens
// stay in ns.
func In(t testing.TB, ns string, fn func()) {
	t.Helper()
	runtime.LockOSThread()
	self, err := os.Open("/proc/thread-self/ns/net")
	if err != nil {
		runtime.UnlockOSThread()
		t.Fatal(err)
	}
	defer self.Close()
	target, err := os.Open("/var/run/netns/" + ns)
	if err != nil {
		runtime.UnlockOSThread()
		t.Fatal(err)
	}
	defer target.Close()
	if err := unix.Setns(int(target.Fd()), unix.CLONE_NEWNET); err != nil {
		runtime.UnlockOSThread()
		t.Fatalf("entering %s: %v", ns, err)
	}
	defer func() {
		if err := unix.Setns(int(self.Fd()), unix.CLONE_NEWNET); err != nil {
			// The thread stays locked and dies with the goroutine.
			t.Errorf("leaving %s: %v", ns, err)
			return
		}
		runtime.UnlockOSThread()
	}()
	fn()
}

// Sender sends raw Ethernet frames out of an interface.
type Sender struct {
	fd int
	sa unix.SockaddrLinklayer
}

// NewSender opens an AF_PACKET socket on iface; call it inside the
// interface's namespace (In). The socket stays in that namespace and
// sends from any thread.
func NewSender(t testing.TB, iface string) *Sender {
	t.Helper()
	fd, err := unix.Socket(unix.AF_PACKET, unix.SOCK_RAW|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(fd) })
	ifi, err := ifIndex(iface)
	if err != nil {
		t.Fatal(err)
	}
	return &Sender{fd: fd, sa: unix.SockaddrLinklayer{Ifindex: ifi, Halen: 6}}
}

// Send sends one frame, waiting while the socket's buffer is full.
func (s *Sender) Send(frame []byte) error {
	for {
		err := unix.Sendto(s.fd, frame, 0, &s.sa)
		if err == unix.ENOBUFS || err == unix.EAGAIN {
			time.Sleep(50 * time.Microsecond)
			continue
		}
		return err
	}
}

func ifIndex(name string) (int, error) {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return 0, err
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq(name)
	if err != nil {
		return 0, err
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFINDEX, ifr); err != nil {
		return 0, fmt.Errorf("interface %s: %w", name, err)
	}
	return int(ifr.Uint32()), nil
}

// SendAt sends frames at about rate frames per second (0: as fast as the
// socket takes them) and returns the first error.
func (s *Sender) SendAt(frames [][]byte, rate int) error {
	start := time.Now()
	for i, f := range frames {
		if err := s.Send(f); err != nil {
			return err
		}
		if rate > 0 && i%64 == 63 {
			if d := time.Duration(i+1) * time.Second / time.Duration(rate); time.Since(start) < d {
				time.Sleep(d - time.Since(start))
			}
		}
	}
	return nil
}

// RoCEFrames builds n RoCEv2 frames with the decode layers (through
// internal/synth): RDMA WRITE Only with 1 KiB of payload and 64-byte
// ACKs, alternating, on consecutive PSNs from psn0 (wrapping at 2^24).
func RoCEFrames(t testing.TB, n int, psn0 uint32) [][]byte {
	t.Helper()
	payload := bytes.Repeat([]byte("rocetap!"), 128)
	out := make([][]byte, 0, n)
	for i := range n {
		psn := (psn0 + uint32(i)) & 0xFFFFFF
		var f synth.RoCEv2
		if i%2 == 0 {
			f.T.BTH = decode.BTH{Opcode: decode.Opcode(decode.TransportRC | decode.OpWriteOnly), DestQP: 0x11, PSN: psn, AckReq: true, PKey: 0xFFFF}
			f.T.RETH = decode.RETH{VA: 0x10000 + uint64(i)*1024, RKey: 0x1234, DMALen: 1024}
			f.T.Payload = payload
		} else {
			f.Reverse = true
			f.T.BTH = decode.BTH{Opcode: decode.Opcode(decode.TransportRC | decode.OpAcknowledge), DestQP: 0x12, PSN: (psn - 1) & 0xFFFFFF, PKey: 0xFFFF}
			f.T.AETH = decode.AETH{Syndrome: 0x1F, MSN: uint32(i)}
		}
		b, _, _, err := f.Build()
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, b)
	}
	return out
}
