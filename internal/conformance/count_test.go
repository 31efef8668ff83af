package conformance

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/rocetap/rocetap/internal/testcap"
)

// TestCountLikeTshark: decode's -c and -a packets:N select the frames
// tshark 4.0 selects: -c N reads N packets (those -Y drops count), -a
// packets:N stops after N packets shown.
func TestCountLikeTshark(t *testing.T) {
	ts := testcap.Tshark(t)
	const file = "../../testdata/rxe/read_atomic.pcap"
	const flt = "infiniband.bth.opcode == 18"
	for _, args := range [][]string{
		{"-c", "3"}, {"-c", "14"}, {"-a", "packets:2"}, {"-c", "14", "-a", "packets:1"}, {"-c", "5"}, {"-a", "packets:100"},
	} {
		for _, filter := range []string{flt, ""} {
			a := append([]string{"-r", file, "-T", "fields", "-e", "frame.number"}, args...)
			if filter != "" {
				a = append(a, "-Y", filter)
			}
			want, err := exec.Command(ts, a...).Output()
			if err != nil {
				t.Fatalf("tshark %v: %v", a, err)
			}
			got, err := rocetapOut(append([]string{"decode"}, a...)...)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != string(want) {
				t.Errorf("%s: tshark prints frames %q, rocetap %q", strings.Join(a[4:], " "), strings.Fields(string(want)), strings.Fields(string(got)))
			}
		}
	}
}
