package cli

import (
	"strings"
	"testing"
)

// TestCaptureFlags: usage errors say what is wrong and what to do.
func TestCaptureFlags(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"capture"}, "no interface given: name one with -i (rocetap capture -D lists them)"},
		{[]string{"capture", "-i", "eth0", "-b", "filesize:100"}, "-b needs a file to rotate: give -w FILE"},
		{[]string{"capture", "-i", "eth0", "-w", "-", "-b", "files:3"}, "-b needs a file to rotate"},
		{[]string{"capture", "-i", "eth0", "-w", "x.pcapng", "-b", "size:100"}, `-b "size:100": want filesize:KB, duration:SECONDS or files:N`},
		{[]string{"capture", "-i", "eth0", "-w", "x.pcapng", "-b", "filesize:-3"}, `-b "filesize:-3": want KEY:NUMBER with a positive number, e.g. -b filesize:102400`},
		{[]string{"capture", "-i", "eth0", "-a", "packets:10"}, `-a "packets:10": rocetap stops on duration:SECONDS (and -c for a packet count)`},
		{[]string{"capture", "-i", "eth0", "-a", "duration"}, `-a "duration": want KEY:NUMBER`},
		{[]string{"capture", "-i", "eth0", "-c", "-1"}, "-c -1: want a positive packet count"},
		{[]string{"capture", "-i", "eth0", "--stats-every", "-1"}, "--stats-every -1"},
		{[]string{"capture", "-i", "eth0", "-Y", "infiniband.bth.psn =="}, ""},
		{[]string{"capture", "-i", "eth0", "-d", "udp.port==0,infiniband"}, "-d \"udp.port==0,infiniband\""},
		{[]string{"capture", "-i", "eth0", "--backend", "nosuch"}, `capture backend "nosuch" is not built in`},
		{[]string{"capture", "extra"}, "unknown command"},
	}
	for _, c := range cases {
		_, errOut, code := run(t, nil, c.args...)
		if code == 0 || !strings.Contains(errOut, c.want) {
			t.Errorf("rocetap %s: exit %d, stderr %q; want an error with %q", strings.Join(c.args, " "), code, errOut, c.want)
		}
	}
}

// TestCaptureList: -D lists the interfaces, loopback among them.
func TestCaptureList(t *testing.T) {
	out, errOut, code := run(t, nil, "capture", "-D")
	if code != 0 || !strings.Contains(out, ". lo (loopback") {
		t.Fatalf("capture -D: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}
