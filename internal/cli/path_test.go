package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rocetap/rocetap/internal/printer"
)

// TestPathGolden checks rocetap path's three outputs on testdata/path
// (built by pathcmp's Example, whose truth pathcmp's tests check).
func TestPathGolden(t *testing.T) {
	a, b := td+"path/a.pcapng", td+"path/b.pcapng"
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"path.text", []string{"path", "-r", a, "-r", b}},
		{"path.json", []string{"path", "-r", a, "-r", b, "-T", "json"}},
		{"path.fields", []string{"path", "-r", a, "-r", b, "-T", "fields", "-E", "header=y",
			"-e", "rocetap.path.point", "-e", "frame.number", "-e", "infiniband.bth.psn", "-e", "rocetap.path.direction",
			"-e", "rocetap.path.status", "-e", "rocetap.path.peer_frame", "-e", "rocetap.path.delay", "-e", "rocetap.path.expert",
			"-Y", "rocetap.path.status != \"matched\" or rocetap.path.expert or rocetap.path.reordered or rocetap.path.naked"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, errOut, code := run(t, nil, tc.args...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			checkGolden(t, tc.name, out)
		})
	}
}

// TestPathEditRecovers shifts B's capture by a known offset and drift
// with rocetap edit and checks that rocetap path finds them on top of
// the clock the capture already had.
func TestPathEditRecovers(t *testing.T) {
	a, b := td+"path/a.pcapng", td+"path/b.pcapng"
	shifted := filepath.Join(t.TempDir(), "b-shifted.pcap")
	if _, errOut, code := run(t, nil, "edit", "-r", b, "-w", shifted, "--time-shift", "-3.25s", "--time-drift", "-400"); code != 0 {
		t.Fatalf("edit: exit %d: %s", code, errOut)
	}
	clock := func(args ...string) printer.PathJSON {
		t.Helper()
		out, errOut, code := run(t, nil, append([]string{"path", "-T", "json"}, args...)...)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		var r printer.PathJSON
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatal(err)
		}
		return r
	}
	full := clock("-r", a, "-r", b)
	before, after := full.Clock, clock("-r", a, "-r", shifted).Clock
	// B's clock t becomes t − 3.25 s − (t − b0)·400e-6, b0 B's first
	// frame. At A's first packet a0, B's clock read t = a0 + offset, so
	// the offset there becomes offset − 3.25 s − (a0 + offset − b0)·400e-6;
	// the drift changes by about −400 ppm.
	a0, err := time.Parse(time.RFC3339Nano, before.Ref)
	if err != nil {
		t.Fatal(err)
	}
	b0, err := time.Parse(time.RFC3339Nano, full.Captures[1].First)
	if err != nil {
		t.Fatal(err)
	}
	wantOff := before.Offset - 3.25 - (a0.Sub(b0).Seconds()+before.Offset)*400e-6
	if d := after.Offset - wantOff; d > 3*after.OffsetErr+1e-6 || d < -3*after.OffsetErr-1e-6 {
		t.Errorf("offset %.9f ± %.9f s, want %.9f", after.Offset, after.OffsetErr, wantOff)
	}
	wantDrift := before.DriftPPM - 400
	if d := after.DriftPPM - wantDrift; d > 3*after.DriftErrPPM || d < -3*after.DriftErrPPM {
		t.Errorf("drift %.2f ± %.2f ppm, want %.2f", after.DriftPPM, after.DriftErrPPM, wantDrift)
	}
}

func TestPathErrors(t *testing.T) {
	a := td + "path/a.pcapng"
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"path", "-r", a}, "give two captures"},
		{[]string{"path", "-r", a, "-r", "-"}, "path reads files"},
		{[]string{"path", "-r", a, "-r", a, "-T", "ek"}, `-T "ek"`},
		{[]string{"path", "-r", a, "-r", a, "-T", "fields"}, "at least one -e"},
		{[]string{"path", "-r", a, "-r", a, "-Y", "udp"}, "-Y and -e select frames for -T fields"},
		{[]string{"path", "-r", a, "-r", a, "-T", "fields", "-e", "rocetap.path.nope"}, "rocetap.path.nope"},
		{[]string{"path", "-r", a, "-r", a, "--window", "0s"}, "--window"},
		{[]string{"path", "-r", a, "-r", td + "nonexistent.pcap"}, "nonexistent"},
		{[]string{"edit", "-r", a, "-w", filepath.Join(t.TempDir(), "x.pcap"), "--time-drift", "2e6"}, "--time-drift"},
	} {
		_, errOut, code := run(t, nil, tc.args...)
		if code != ExitInput || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d, %q; want exit %d and %q", tc.args, code, errOut, ExitInput, tc.want)
		}
	}
}

// TestPathREADME: the README's example of rocetap path is its output.
func TestPathREADME(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	const cmd = "$ rocetap path -r testdata/path/a.pcapng -r testdata/path/b.pcapng\n"
	_, rest, ok := strings.Cut(string(b), cmd)
	if !ok {
		t.Fatal("the README has no example of rocetap path")
	}
	want, _, _ := strings.Cut(rest, "\n$ ")
	out, errOut, code := run(t, nil, "path", "-r", td+"path/a.pcapng", "-r", td+"path/b.pcapng")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	out = strings.ReplaceAll(out, td, "testdata/")
	if strings.TrimSpace(out) != strings.TrimSpace(want) {
		t.Errorf("the README's example differs from the output:\n--- output\n%s\n--- README\n%s", out, want)
	}
}
