package conformance

import (
	"bytes"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/rocetap/rocetap/decode"
	"github.com/rocetap/rocetap/internal/cli"
	"github.com/rocetap/rocetap/internal/testcap"
)

// ulpPrefixes are the protocols of the ULP fields: the main comparison
// runs tshark with them disabled (tsharkArgs), TestULPFieldsMatchTshark
// with them on.
var ulpPrefixes = []string{"nvme.", "nvme-rdma."}

func isULPField(name string) bool {
	for _, p := range ulpPrefixes {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// TestULPFieldsMatchTshark compares every NVMe-oF field rocetap and
// tshark both know on the real NVMe-oF captures (testdata/ulp), frame by
// frame, with tshark's nvme-rdma dissector on; where they differ,
// ulpKnownDifference says why tshark is wrong (README: "Where rocetap and
// tshark differ").
func TestULPFieldsMatchTshark(t *testing.T) {
	ts := testcap.Tshark(t)
	known := tsharkFields(t, ts)
	var names []string
	for _, f := range decode.Fields() {
		if _, ok := known[f.Abbrev]; ok && isULPField(f.Abbrev) && f.Type != decode.FTProtocol {
			names = append(names, f.Abbrev)
		}
	}
	sort.Strings(names)
	// rocetap's own columns, for the known differences
	own := []string{"rocetap.nvme.capsule_frames", "rocetap.nvme.kind", "rocetap.nvme.cmd_frame", "frame.number"}
	files, _ := filepath.Glob("../../testdata/ulp/nvmeof_*.pcap")
	if len(files) < 2 {
		t.Fatalf("%d NVMe-oF captures in testdata/ulp", len(files))
	}
	cells, differ := 0, 0
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			args := []string{"-r", file, "-T", "fields", "-E", "occurrence=a", "-E", "aggregator=,"}
			for _, n := range names {
				args = append(args, "-e", n)
			}
			var stderr bytes.Buffer
			cmd := exec.Command(ts, args...)
			cmd.Stderr = &stderr
			want, err := cmd.Output()
			if err != nil {
				t.Fatalf("tshark %s: %v\n%s", file, err, stderr.String())
			}
			rargs := []string{"decode", "-r", file, "-T", "fields", "-E", "occurrence=a", "-E", "aggregator=,"}
			for _, n := range append(names, own...) {
				rargs = append(rargs, "-e", n)
			}
			var out, errOut bytes.Buffer
			if code := cli.Main(rargs, cli.IO{Out: &out, ErrOut: &errOut}); code != 0 {
				t.Fatalf("rocetap: exit %d: %s", code, errOut.String())
			}
			wl, gl := lines(want), lines(out.Bytes())
			if len(wl) != len(gl) {
				t.Fatalf("tshark printed %d frames, rocetap %d", len(wl), len(gl))
			}
			// the frames ending a capsule of several packets
			multi := map[string]bool{}
			for _, l := range gl {
				c := strings.Split(l, "\t")
				if len(c) == len(names)+len(own) && strings.Contains(c[len(names)], ",") {
					multi[c[len(c)-1]] = true
				}
			}
			bad := map[string]int{}
			for i := range wl {
				wc, gc := strings.Split(wl[i], "\t"), strings.Split(gl[i], "\t")
				if len(wc) != len(names) || len(gc) != len(names)+len(own) {
					t.Fatalf("frame %d: %d/%d columns", i+1, len(wc), len(gc))
				}
				row := map[string]string{}
				for j, n := range own {
					row[n] = gc[len(names)+j]
				}
				for j, n := range names {
					cells++
					if wc[j] == gc[j] {
						continue
					}
					differ++
					if why := ulpKnownDifference(n, wc[j], gc[j], row, multi); why == "" {
						if bad[n] < 3 {
							t.Errorf("frame %d %s: tshark %q, rocetap %q", i+1, n, trunc(wc[j]), trunc(gc[j]))
						}
						bad[n]++
					}
				}
			}
		})
	}
	t.Logf("compared %d NVMe fields: %d values, %d differ where tshark is wrong", len(names), cells, differ)
}

// ulpKnownDifference says why tshark 4.0's value of an NVMe field is
// wrong where it differs from rocetap's, or "" when it is not known to be.
func ulpKnownDifference(field, tshark, rocetap string, row map[string]string, multi map[string]bool) string {
	if tshark == "" && strings.Contains(row["rocetap.nvme.capsule_frames"], ",") {
		return "a capsule reassembled from several SEND packets: tshark cannot (Dissection unsupported)"
	}
	if tshark == "" && strings.HasPrefix(field, "nvme-rdma.cm.req.") {
		return "the NVMe-oF private data of a CM REQ, after the IP CM header: tshark 4.0 decodes none of it"
	}
	if tshark == "" && row["rocetap.nvme.kind"] == "completion" && multi[row["rocetap.nvme.cmd_frame"]] {
		return "the completion of such a capsule: tshark, without the command, decodes none of it"
	}
	return ""
}
