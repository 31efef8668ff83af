package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rocetap/rocetap/decode"
	"github.com/rocetap/rocetap/internal/testcap"
)

func runEdit(t *testing.T, args ...string) (stdout string, err error) {
	t.Helper()
	var out, errOut bytes.Buffer
	cmd := NewCmdEdit(IO{In: bytes.NewReader(nil), Out: &out, ErrOut: &errOut})
	cmd.SetArgs(args)
	cmd.SetOut(&errOut)
	cmd.SetErr(&errOut)
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	err = cmd.Execute()
	return out.String(), err
}

func TestEditCmd(t *testing.T) {
	out := filepath.Join(t.TempDir(), "lost.pcap")
	stdout, err := runEdit(t, "-r", td+"rxe/write_imm.pcap", "-w", out, "--drop", "8", "--go-back-n", "--dup", "15", "--swap", "19")
	if err != nil {
		t.Fatal(err)
	}
	want := `read 22 frames, wrote 25
dup   in 15 -> out 17, copy out 18
swap  in 19,20 -> out 23,22
go-back-n: lost in 8 (10.77.0.1 -> 10.77.0.2 QP 0x000014, PSN 260)
  in 10 -> out 8 shows the gap
  out 9  NAK PSN sequence error, PSN 260, MSN 3, to QP 0x000014 (built from in 9)
  out 10  retransmit in 8, PSN 260
  out 11  retransmit in 10, PSN 261
  out 12  response in 9 (PSN 260) moved after the retransmission
`
	if stdout != want {
		t.Errorf("report:\n%s\nwant:\n%s", stdout, want)
	}
	// Read back with pcapgo, independently of rocetap's reader.
	in := testcap.ReadPcap(t, td+"rxe/write_imm.pcap")
	got := testcap.ReadPcap(t, out)
	if len(got) != 25 {
		t.Fatalf("%d frames written, want 25", len(got))
	}
	// Output frame -> input frame (0: the NAK).
	layout := []int{1, 2, 3, 4, 5, 6, 7, 10, 0, 8, 10, 9, 11, 12, 13, 14, 15, 15, 16, 17, 18, 20, 19, 21, 22}
	for i, n := range layout {
		if n == 0 {
			var p decode.Packet
			decode.Decode(&p, got[i].Data, got[i].LinkType)
			if p.BTH.Opcode != 0x11 || p.AETH.Syndrome != 0x60 || p.BTH.PSN != 260 || p.ICRCStatus != decode.CRCGood {
				t.Errorf("out %d: %v syndrome %#x PSN %d ICRC %s, want a NAK 0x60 for PSN 260 with a good ICRC",
					i+1, p.BTH.Opcode, p.AETH.Syndrome, p.BTH.PSN, p.ICRCStatus)
			}
			continue
		}
		if !bytes.Equal(got[i].Data, in[n-1].Data) {
			t.Errorf("out %d differs from input frame %d", i+1, n)
		}
	}

	// The same through the root command.
	out2 := filepath.Join(t.TempDir(), "dup.pcap")
	stdout, stderr, code := run(t, nil, "edit", "-r", td+"rxe/send_imm.pcap", "-w", out2, "--dup", "1-2")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, "dup   in 2 -> out 3, copy out 4\n") {
		t.Errorf("report:\n%s", stdout)
	}
	if n := len(testcap.ReadPcap(t, out2)); n != 20 {
		t.Errorf("%d frames written, want 20", n)
	}
}

func TestEditErrors(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out.pcap")
	in := td + "rxe/write_imm.pcap"
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"no input", []string{"-w", out, "--drop", "1"}, "no capture given: use -r FILE"},
		{"no output", []string{"-r", in, "--drop", "1"}, "no output given: use -w FILE"},
		{"stdin", []string{"-r", "-", "-w", out, "--drop", "1"}, "edit reads a file"},
		{"no fault", []string{"-r", in, "-w", out}, "no fault given: use --drop, --dup or --swap"},
		{"go-back-n alone", []string{"-r", in, "-w", out, "--go-back-n", "--dup", "2"}, "--go-back-n changes what --drop does"},
		{"bad number", []string{"-r", in, "-w", out, "--drop", "3,x"}, `--drop "3,x": "x" is not a frame number`},
		{"out of range", []string{"-r", in, "-w", out, "--drop", "20-23"}, "--drop 23: no such frame: the capture has 22 frames"},
		{"two faults", []string{"-r", in, "-w", out, "--drop", "4", "--swap", "3"}, "frame 4 is in both --drop 4 and --swap 3"},
		{"swap last", []string{"-r", in, "-w", out, "--swap", "22"}, "frame 22 is the last frame"},
		{"same file", []string{"-r", in, "-w", in, "--drop", "1"}, "is the input file: write to another file"},
		{"missing input", []string{"-r", filepath.Join(dir, "nope.pcap"), "-w", out, "--drop", "1"}, "nope.pcap"},
		{"arguments", []string{"-r", in, "-w", out, "--drop", "1", "extra"}, "unknown command"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := runEdit(t, c.args...)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want one containing %q", err, c.want)
			}
		})
	}
	if _, err := os.Stat(out); err == nil {
		t.Errorf("%s was written although every run failed", out)
	}
}

func TestEditFrameList(t *testing.T) {
	cases := []struct {
		in      string
		want    []int
		wantErr string
	}{
		{"", nil, ""},
		{"3", []int{3}, ""},
		{"3,5-7", []int{3, 5, 6, 7}, ""},
		{" 1 , 2-2 ", []int{1, 2}, ""},
		{"0", nil, `"0" is not a frame number`},
		{"-3", nil, `"-3" is not a frame number`},
		{"3,", nil, `"" is not a frame number`},
		{"7-5", nil, "range 7-5 runs backwards: write 5-7"},
		{"5-x", nil, `"5-x" is not a range`},
		{"1-999999999", nil, "too large"},
	}
	for _, c := range cases {
		got, err := parseFrameList("--drop", c.in)
		if c.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Errorf("%q: error %v, want %q", c.in, err, c.wantErr)
			}
			continue
		}
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("%q: %v, %v; want %v", c.in, got, err, c.want)
		}
	}
}
