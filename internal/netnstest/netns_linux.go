//go:build linux

// Package netnstest makes network namespaces joined by a veth pair for
// tests of live capture, and sends raw frames into them. Everything it
// makes lives inside the namespaces it creates and is removed when the
// test ends; tests skip with the reason when the machine cannot (not
// root, no ip command).
package netnstest

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/rocetap/rocetap/decode"
	"github.com/rocetap/rocetap/internal/synth"
	"github.com/rocetap/rocetap/internal/testcap"
	"golang.org/x/sys/unix"
)

// Pair is two network namespaces joined by a veth pair, made for one
// test and removed after it. Nothing in them has a route outside.
type Pair struct {
	NsA, NsB string // namespace names (ip netns)
	IfA, IfB string // the veth ends, IfA in NsA, IfB in NsB
}

// ErrUnsupported wraps the reasons a machine cannot make the pair: not
// root, no ip command, no network namespaces.
var ErrUnsupported = errors.New("network namespaces unavailable")

// Create makes the namespaces and the pair; remove deletes them (and the
// pair with them). The error wraps ErrUnsupported when the machine cannot.
func Create() (p *Pair, remove func(), err error) {
	if os.Geteuid() != 0 {
		return nil, nil, fmt.Errorf("%w: live capture needs root (network namespaces, AF_PACKET): run as root, as CI does", ErrUnsupported)
	}
	if _, err := exec.LookPath("ip"); err != nil {
		return nil, nil, fmt.Errorf("%w: the ip command is missing (Debian package iproute2)", ErrUnsupported)
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
		return nil, nil, fmt.Errorf("%w: cannot make a network namespace here: %v", ErrUnsupported, err)
	}
	var made []string
	made = append(made, v.NsA)
	remove = func() {
		for _, ns := range made {
			run("netns", "del", ns)
		}
	}
	if err := run("netns", "add", v.NsB); err != nil {
		remove()
		return nil, nil, err
	}
	made = append(made, v.NsB)
	steps := [][]string{
		{"link", "add", v.IfA, "netns", v.NsA, "type", "veth", "peer", "name", v.IfB, "netns", v.NsB},
		{"-n", v.NsA, "link", "set", "lo", "up"},
		{"-n", v.NsB, "link", "set", "lo", "up"},
	}
	for _, args := range steps {
		if err := run(args...); err != nil {
			remove()
			return nil, nil, err
		}
	}
	// No IPv6 on the pair: no neighbour discovery or router solicitations
	// in the capture.
	for _, ns := range []string{v.NsA, v.NsB} {
		exec.Command("ip", "netns", "exec", ns, "sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1", "net.ipv6.conf.default.disable_ipv6=1").Run()
	}
	for _, args := range [][]string{{"-n", v.NsA, "link", "set", v.IfA, "up"}, {"-n", v.NsB, "link", "set", v.IfB, "up"}} {
		if err := run(args...); err != nil {
			remove()
			return nil, nil, err
		}
	}
	return v, remove, nil
}

// New makes the pair for a test and removes it after. When the machine
// cannot (not root), the test is skipped with the reason, or fails when
// ROCETAP_REQUIRE_ORACLES=1 (CI runs it as root).
func New(t testing.TB) *Pair {
	t.Helper()
	v, remove, err := Create()
	skipUnsupported(t, err)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(remove)
	return v
}

// Enter runs fn on a thread inside network namespace ns: sockets fn opens
// stay in ns.
func Enter(ns string, fn func() error) error {
	runtime.LockOSThread()
	self, err := os.Open("/proc/thread-self/ns/net")
	if err != nil {
		runtime.UnlockOSThread()
		return err
	}
	defer self.Close()
	target, err := os.Open("/var/run/netns/" + ns)
	if err != nil {
		runtime.UnlockOSThread()
		return err
	}
	defer target.Close()
	if err := unix.Setns(int(target.Fd()), unix.CLONE_NEWNET); err != nil {
		runtime.UnlockOSThread()
		return fmt.Errorf("entering network namespace %s: %w", ns, err)
	}
	ferr := fn()
	if err := unix.Setns(int(self.Fd()), unix.CLONE_NEWNET); err != nil {
		// The thread stays locked and dies with the goroutine.
		return fmt.Errorf("leaving network namespace %s: %w", ns, err)
	}
	runtime.UnlockOSThread()
	return ferr
}

// In is Enter for tests.
func In(t testing.TB, ns string, fn func()) {
	t.Helper()
	if err := Enter(ns, func() error { fn(); return nil }); err != nil {
		t.Fatal(err)
	}
}

// Sender sends raw Ethernet frames out of an interface.
type Sender struct {
	fd int
	sa unix.SockaddrLinklayer
}

// OpenSender opens an AF_PACKET socket on iface; call it inside the
// interface's namespace (Enter). The socket stays in that namespace and
// sends from any thread.
func OpenSender(iface string) (*Sender, error) {
	fd, err := unix.Socket(unix.AF_PACKET, unix.SOCK_RAW|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	ifi, err := ifIndex(iface)
	if err != nil {
		unix.Close(fd)
		return nil, err
	}
	return &Sender{fd: fd, sa: unix.SockaddrLinklayer{Ifindex: ifi, Halen: 6}}, nil
}

// Close closes the socket.
func (s *Sender) Close() error { return unix.Close(s.fd) }

// NewSender is OpenSender for tests: the socket is closed when the test
// ends.
func NewSender(t testing.TB, iface string) *Sender {
	t.Helper()
	s, err := OpenSender(iface)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
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

// Frame kinds for Frames.
const (
	Mixed  = iota // WRITE and ACK, alternating
	ACKs          // 64-byte RC ACKs (62 bytes, as rdma_rxe sends them)
	Writes        // RDMA WRITE Only with 1 KiB of payload (1082 bytes)
)

// Frames builds n RoCEv2 frames of a kind with the decode layers (through
// internal/synth), on consecutive PSNs from psn0 (wrapping at 2^24).
func Frames(kind, n int, psn0 uint32) ([][]byte, error) {
	payload := bytes.Repeat([]byte("rocetap!"), 128)
	out := make([][]byte, 0, n)
	for i := range n {
		psn := (psn0 + uint32(i)) & 0xFFFFFF
		var f synth.RoCEv2
		if kind == Writes || kind == Mixed && i%2 == 0 {
			f.T.BTH = decode.BTH{Opcode: decode.Opcode(decode.TransportRC | decode.OpWriteOnly), DestQP: 0x11, PSN: decode.PSN(psn), AckReq: true, PKey: 0xFFFF}
			f.T.RETH = decode.RETH{VA: 0x10000 + uint64(i%4096)*1024, RKey: 0x1234, DMALen: 1024}
			f.T.Payload = payload
		} else {
			f.Reverse = true
			f.T.BTH = decode.BTH{Opcode: decode.Opcode(decode.TransportRC | decode.OpAcknowledge), DestQP: 0x12, PSN: decode.PSN(psn).Add(-1), PKey: 0xFFFF}
			f.T.AETH = decode.AETH{Syndrome: 0x1F, MSN: uint32(i) & 0xFFFFFF}
		}
		b, _, _, err := f.Build()
		if err != nil {
			return nil, err
		}
		out = append(out, b)
	}
	return out, nil
}

// RoCEFrames is Frames(Mixed, ...) for tests: RDMA WRITE Only with 1 KiB
// of payload and 64-byte ACKs, alternating.
func RoCEFrames(t testing.TB, n int, psn0 uint32) [][]byte {
	t.Helper()
	f, err := Frames(Mixed, n, psn0)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// skipUnsupported skips the test when err says the machine cannot make
// namespaces, or fails it when ROCETAP_REQUIRE_ORACLES=1: there a skip
// would hide a test that did not run.
func skipUnsupported(t testing.TB, err error) {
	t.Helper()
	if errors.Is(err, ErrUnsupported) {
		testcap.OracleMissing(t, err.Error(), "CI runs the live tests as root, with iproute2")
	}
}
