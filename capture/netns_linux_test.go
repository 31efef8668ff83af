//go:build linux

package capture_test

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// vethPair is two network namespaces joined by a veth pair, made for one
// test and removed after it. Nothing in them has a route outside.
type vethPair struct {
	nsA, nsB string // namespace names (ip netns)
	ifA, ifB string // the veth ends, ifA in nsA, ifB in nsB
}

// newVethPair makes the namespaces and the pair, or skips the test with
// the reason when it cannot (not root, no ip command, no netns support).
func newVethPair(t *testing.T) *vethPair {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("live capture tests need root (network namespaces, AF_PACKET): run as root, as CI does")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skip("live capture tests need the ip command (Debian package iproute2)")
	}
	id := fmt.Sprintf("%d%d", os.Getpid()%100000, time.Now().UnixNano()%1000)
	v := &vethPair{nsA: "rtapA" + id, nsB: "rtapB" + id, ifA: "rta" + id, ifB: "rtb" + id}
	run := func(args ...string) error {
		out, err := exec.Command("ip", args...).CombinedOutput()
		if err != nil {
			return fmt.Errorf("ip %s: %v: %s", strings.Join(args, " "), err, out)
		}
		return nil
	}
	if err := run("netns", "add", v.nsA); err != nil {
		t.Skipf("cannot make a network namespace here: %v", err)
	}
	t.Cleanup(func() { run("netns", "del", v.nsA) })
	if err := run("netns", "add", v.nsB); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { run("netns", "del", v.nsB) })
	for _, args := range [][]string{
		{"link", "add", v.ifA, "netns", v.nsA, "type", "veth", "peer", "name", v.ifB, "netns", v.nsB},
		// No IPv6 on the pair: no neighbour discovery or router
		// solicitations in the capture.
		{"-n", v.nsA, "link", "set", "lo", "up"},
		{"-n", v.nsB, "link", "set", "lo", "up"},
	} {
		if err := run(args...); err != nil {
			t.Fatal(err)
		}
	}
	for _, ns := range []string{v.nsA, v.nsB} {
		if out, err := exec.Command("ip", "netns", "exec", ns, "sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1", "net.ipv6.conf.default.disable_ipv6=1").CombinedOutput(); err != nil {
			t.Logf("disabling IPv6 in %s: %v: %s", ns, err, out)
		}
	}
	for _, args := range [][]string{{"-n", v.nsA, "link", "set", v.ifA, "up"}, {"-n", v.nsB, "link", "set", v.ifB, "up"}} {
		if err := run(args...); err != nil {
			t.Fatal(err)
		}
	}
	return v
}

// in runs fn on a thread inside network namespace ns: sockets fn opens
// stay in ns.
func in(t *testing.T, ns string, fn func()) {
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

// sender sends raw Ethernet frames out of an interface.
type sender struct {
	fd int
	sa unix.SockaddrLinklayer
}

// newSender opens an AF_PACKET socket on iface; call it inside the
// interface's namespace (in).
func newSender(t *testing.T, iface string) *sender {
	t.Helper()
	fd, err := unix.Socket(unix.AF_PACKET, unix.SOCK_RAW|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(fd) })
	ifi, err := netInterfaceIndex(iface)
	if err != nil {
		t.Fatal(err)
	}
	return &sender{fd: fd, sa: unix.SockaddrLinklayer{Ifindex: ifi, Halen: 6}}
}

func (s *sender) send(frame []byte) error {
	for {
		err := unix.Sendto(s.fd, frame, 0, &s.sa)
		if err == unix.ENOBUFS || err == unix.EAGAIN {
			time.Sleep(50 * time.Microsecond)
			continue
		}
		return err
	}
}

func netInterfaceIndex(name string) (int, error) {
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
