//go:build linux

package netnstest

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// Line is three network namespaces in a line, A — M — B, joined by two
// veth pairs: IfA (in NsA) to IfMA (in NsM), and IfMB (in NsM) to IfB
// (in NsB). Nothing in them has an address or a route: frames cross M
// only when a program there moves them (Forward).
type Line struct {
	NsA, NsM, NsB string
	IfA, IfMA     string
	IfMB, IfB     string
}

// CreateLine makes the namespaces and the pairs; remove deletes them.
// The error wraps ErrUnsupported when the machine cannot.
func CreateLine() (l *Line, remove func(), err error) {
	if os.Geteuid() != 0 {
		return nil, nil, fmt.Errorf("%w: three network namespaces in a line need root: run as root, as CI does", ErrUnsupported)
	}
	if _, err := exec.LookPath("ip"); err != nil {
		return nil, nil, fmt.Errorf("%w: the ip command is missing (Debian package iproute2)", ErrUnsupported)
	}
	id := fmt.Sprintf("%d%d", os.Getpid()%100000, time.Now().UnixNano()%1000)
	l = &Line{NsA: "rtlA" + id, NsM: "rtlM" + id, NsB: "rtlB" + id,
		IfA: "rla" + id, IfMA: "rlma" + id, IfMB: "rlmb" + id, IfB: "rlb" + id}
	run := func(args ...string) error {
		out, err := exec.Command("ip", args...).CombinedOutput()
		if err != nil {
			return fmt.Errorf("ip %s: %v: %s", strings.Join(args, " "), err, out)
		}
		return nil
	}
	var made []string
	remove = func() {
		for _, ns := range made {
			run("netns", "del", ns)
		}
	}
	for i, ns := range []string{l.NsA, l.NsM, l.NsB} {
		if err := run("netns", "add", ns); err != nil {
			remove()
			if i == 0 {
				return nil, nil, fmt.Errorf("%w: cannot make a network namespace here: %v", ErrUnsupported, err)
			}
			return nil, nil, err
		}
		made = append(made, ns)
	}
	steps := [][]string{
		{"link", "add", l.IfA, "netns", l.NsA, "type", "veth", "peer", "name", l.IfMA, "netns", l.NsM},
		{"link", "add", l.IfMB, "netns", l.NsM, "type", "veth", "peer", "name", l.IfB, "netns", l.NsB},
	}
	for _, ns := range []string{l.NsA, l.NsM, l.NsB} {
		steps = append(steps, []string{"-n", ns, "link", "set", "lo", "up"})
	}
	for _, args := range steps {
		if err := run(args...); err != nil {
			remove()
			return nil, nil, err
		}
	}
	// No IPv6: no neighbour discovery or router solicitations.
	for _, ns := range []string{l.NsA, l.NsM, l.NsB} {
		exec.Command("ip", "netns", "exec", ns, "sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1", "net.ipv6.conf.default.disable_ipv6=1").Run()
	}
	for _, args := range [][]string{{"-n", l.NsA, "link", "set", l.IfA, "up"}, {"-n", l.NsM, "link", "set", l.IfMA, "up"},
		{"-n", l.NsM, "link", "set", l.IfMB, "up"}, {"-n", l.NsB, "link", "set", l.IfB, "up"}} {
		if err := run(args...); err != nil {
			remove()
			return nil, nil, err
		}
	}
	return l, remove, nil
}

// NewLine makes the line for a test and removes it after. When the
// machine cannot (not root), the test is skipped with the reason, or
// fails when ROCETAP_REQUIRE_ORACLES=1 (CI runs it as root).
func NewLine(t testing.TB) *Line {
	t.Helper()
	l, remove, err := CreateLine()
	skipUnsupported(t, err)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(remove)
	return l
}
