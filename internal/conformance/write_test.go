package conformance

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestDecodeWriteLikeTshark: `rocetap decode -r IN -Y F -w OUT [-F fmt]`
// writes the packets `tshark -r IN -Y F -w OUT [-F fmt]` writes: read
// back by tshark, both files give the same timestamps, lengths,
// interfaces, protocols and bytes (tshark -x).
func TestDecodeWriteLikeTshark(t *testing.T) {
	ts := tsharkPath(t)
	cases := []struct{ file, filter, format string }{
		{"rxe/read_atomic.pcap", "infiniband.bth.opcode == 18", "pcapng"},
		{"rxe/read_atomic.pcap", "infiniband.bth.opcode == 18", "pcap"},
		{"rxe/cm_rping.pcap", "", "pcapng"},
		{"synth/sll_sll2_raw.pcapng", "infiniband", "pcapng"},
		{"synth/erf_ib_eth.pcap", "infiniband.bth.psn > 0", "pcapng"},
		{"rxe/err_rnr.pcap", "infiniband.aeth", "pcap"},
	}
	for _, c := range cases {
		t.Run(c.file+" "+c.filter+" "+c.format, func(t *testing.T) {
			in := "../../testdata/" + c.file
			dir := t.TempDir()
			mine, theirs := filepath.Join(dir, "rocetap."+c.format), filepath.Join(dir, "tshark."+c.format)
			args := []string{"-r", in, "-F", c.format}
			if c.filter != "" {
				args = append(args, "-Y", c.filter)
			}
			if out, err := exec.Command(ts, append(args, "-w", theirs)...).CombinedOutput(); err != nil {
				t.Fatalf("tshark: %v: %s", err, out)
			}
			if _, err := rocetapOut(append([]string{"decode"}, append(args, "-w", mine)...)...); err != nil {
				t.Fatal(err)
			}
			read := func(path string, extra ...string) string {
				out, err := exec.Command(ts, append([]string{"-r", path}, extra...)...).Output()
				if err != nil {
					t.Fatalf("tshark -r %s: %v", path, err)
				}
				return string(out)
			}
			fields := []string{"-T", "fields", "-e", "frame.time_epoch", "-e", "frame.len", "-e", "frame.cap_len", "-e", "frame.protocols", "-e", "frame.interface_id", "-e", "frame.encap_type"}
			if a, b := read(mine, fields...), read(theirs, fields...); a != b || a == "" {
				t.Errorf("frames differ:\nrocetap's file:\n%s\ntshark's file:\n%s", a, b)
			}
			if a, b := read(mine, "-x"), read(theirs, "-x"); a != b {
				t.Errorf("bytes differ (tshark -x): %d vs %d lines", strings.Count(a, "\n"), strings.Count(b, "\n"))
			}
		})
	}
}
