package decode_test

import (
	"bufio"
	"bytes"
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

// TestSACapturesICRCOracle: the ICRC of every frame of the synthetic SA
// captures (RoCEv2: scapy and the spec script; native InfiniBand: the
// spec script, which also computes the VCRC) is the one the frame
// carries and the one rocetap computes.
func TestSACapturesICRCOracle(t *testing.T) {
	requireOracle(t)
	var in bytes.Buffer
	type frame struct {
		name       string
		icrc, vcrc string
		roce       bool
	}
	var frames []frame
	for _, name := range []string{"ib_sa.pcap", "ib_sa2.pcap", "roce_sa.pcap"} {
		for _, fr := range testcap.ReadPcap(t, "../testdata/synth/"+name) {
			var p decode.Packet
			p.Frame.Len = fr.Len
			decode.Decode(&p, fr.Data, decode.LinkType(fr.LinkType))
			if p.ICRCStatus != decode.CRCGood || p.Encap == decode.EncapIB && p.VCRCStatus != decode.CRCGood {
				t.Errorf("%s frame %d: ICRC %v, VCRC %v", name, fr.Number, p.ICRCStatus, p.VCRCStatus)
			}
			c := p.ICRCComputed
			f := frame{name: fmt.Sprintf("%s#%d", name, fr.Number), roce: p.Encap == decode.EncapRoCEv2,
				icrc: fmt.Sprintf("%08x", c>>24|c>>8&0xFF00|c<<8&0xFF0000|c<<24)}
			if p.Encap == decode.EncapIB {
				f.vcrc = fmt.Sprintf("%04x", p.VCRCComputed>>8|p.VCRCComputed<<8)
			}
			fmt.Fprintf(&in, "%d %d %s\n", len(frames), fr.LinkType, hex.EncodeToString(fr.Data))
			frames = append(frames, f)
		}
	}
	file := filepath.Join(t.TempDir(), "frames.txt")
	if err := os.WriteFile(file, in.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(systemPython, oracleScript, file).Output()
	if err != nil {
		t.Fatalf("%s: %v", oracleScript, err)
	}
	n := 0
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		var i int
		if len(fs) != 5 || func() error { _, err := fmt.Sscan(fs[0], &i); return err }() != nil || i >= len(frames) {
			t.Fatalf("oracle line %q", sc.Text())
		}
		f := frames[i]
		n++
		if f.roce && fs[1] != "scapy="+f.icrc {
			t.Errorf("%s: scapy %s, rocetap %s", f.name, fs[1], f.icrc)
		}
		if fs[2] != "spec="+f.icrc {
			t.Errorf("%s: spec script %s, rocetap %s", f.name, fs[2], f.icrc)
		}
		if !f.roce && fs[4] != "vcrc="+f.vcrc {
			t.Errorf("%s: spec script %s, rocetap %s", f.name, fs[4], f.vcrc)
		}
	}
	if n != len(frames) || n < 60 {
		t.Fatalf("oracle answered %d of %d frames", n, len(frames))
	}
}
