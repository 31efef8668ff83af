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
		{[]string{"capture", "-i", "eth0", "-a", "bytes:10"}, `-a "bytes:10": want duration:SECONDS, packets:N, filesize:KB or files:N`},
		{[]string{"capture", "-i", "eth0", "-a", "filesize:10"}, "-a filesize and -a files stop writing a file: give -w FILE"},
		{[]string{"capture", "-i", "eth0", "-w", "-", "-a", "files:2"}, "give -w FILE"},
		{[]string{"capture", "-i", "eth0", "-w", "x.pcapng", "-a", "files:2"}, "-a files:2 stops after 2 files, so it needs files to rotate"},
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

// TestCaptureAutostopFlags: -a packets:N is -c N (the smaller wins);
// -a filesize:KB stops the one file, or with -b rotates as -b filesize.
func TestCaptureAutostopFlags(t *testing.T) {
	tests := []struct {
		args             []string
		count            int
		stopKB, rotateKB int64
		stopFiles        int
	}{
		{[]string{"-a", "packets:10"}, 10, 0, 0, 0},
		{[]string{"-c", "3", "-a", "packets:10"}, 3, 0, 0, 0},
		{[]string{"-c", "30", "-a", "packets:10"}, 10, 0, 0, 0},
		{[]string{"-w", "x.pcapng", "-a", "filesize:50"}, 0, 50, 0, 0},
		{[]string{"-w", "x.pcapng", "-b", "duration:60", "-a", "filesize:50", "-a", "files:4"}, 0, 0, 50, 4},
	}
	for _, tt := range tests {
		o := &CaptureOptions{Interface: "eth0"}
		cmd := NewCmdCapture(IO{})
		f := cmd.Flags()
		if err := f.Parse(tt.args); err != nil {
			t.Fatal(err)
		}
		o.Count, _ = f.GetInt("count")
		o.Write, _ = f.GetString("write")
		o.Autostop, _ = f.GetStringArray("autostop")
		o.Ring, _ = f.GetStringArray("ring-buffer")
		if err := o.validate(); err != nil {
			t.Fatalf("%v: %v", tt.args, err)
		}
		if o.Count != tt.count || o.sink.StopFileSizeKB != tt.stopKB || o.sink.FileSizeKB != tt.rotateKB || o.sink.StopFiles != tt.stopFiles {
			t.Errorf("%v: count %d, stop %d kB, rotate %d kB, files %d", tt.args, o.Count, o.sink.StopFileSizeKB, o.sink.FileSizeKB, o.sink.StopFiles)
		}
	}
}
