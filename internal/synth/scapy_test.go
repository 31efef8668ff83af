package synth

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rocetap/rocetap/decode"
	"github.com/rocetap/rocetap/internal/testcap"
)

// TestFabricICRCScapy has scapy (scapy.contrib.roce, through decode's
// oracle script) recompute the ICRC of every RoCE frame of the fabric
// captures, which decode.FixCRCs computed: an oracle that shares no code
// with rocetap.
func TestFabricICRCScapy(t *testing.T) {
	const python = "/usr/bin/python3"
	if out, err := exec.Command(python, "-c", "import scapy.contrib.roce").CombinedOutput(); err != nil {
		testcap.OracleMissing(t, fmt.Sprintf("%s cannot import scapy.contrib.roce (%v: %s)", python, err, bytes.TrimSpace(out)),
			"install it with `apt-get install -y python3-scapy`")
	}
	var in bytes.Buffer
	var want []string
	for _, f := range files(t) {
		if f.Name != "cc_dcqcn.pcap" && f.Name != "pfc_pauses.pcapng" {
			continue
		}
		for i := range f.Records {
			r := &f.Records[i]
			if r.Want.Has&decode.HdrBTH == 0 {
				continue
			}
			fmt.Fprintf(&in, "%d %d %s\n", len(want), f.LinkTypeOf(r), hex.EncodeToString(r.Data))
			want = append(want, fmt.Sprintf("%08x", binary.LittleEndian.Uint32(r.Data[len(r.Data)-4:])))
		}
	}
	file := filepath.Join(t.TempDir(), "frames.txt")
	if err := os.WriteFile(file, in.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(python, filepath.Join("..", "..", "decode", "testdata", "icrc_scapy.py"), file).Output()
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != len(want) || len(want) < 50 {
		t.Fatalf("%d answers for %d frames", len(lines), len(want))
	}
	for i, l := range lines {
		if f := strings.Fields(l); len(f) < 2 || f[1] != "scapy="+want[i] {
			t.Errorf("frame %d: scapy says %q, the frame carries %s", i, l, want[i])
		}
	}
}
