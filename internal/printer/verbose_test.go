package printer

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rocetap/rocetap/decode"
	"github.com/rocetap/rocetap/internal/testcap"
)

// testCaptures returns every classic pcap file of testdata/rxe and
// testdata/synth.
func testCaptures(t *testing.T) []string {
	t.Helper()
	var paths []string
	for _, dir := range []string{"rxe", "synth"} {
		m, err := filepath.Glob(filepath.Join("../../testdata", dir, "*.pcap"))
		if err != nil {
			t.Fatal(err)
		}
		paths = append(paths, m...)
	}
	if len(paths) == 0 {
		t.Fatal("no captures in testdata/rxe and testdata/synth")
	}
	return paths
}

// TestVerboseRangesNest checks the -V tree of every frame of the test
// captures, which the TUI's detail and hex panes also draw: each line's
// bytes lie within those of the nearest line above it, at a smaller depth,
// that has bytes of its own (a header within its protocol, a field within
// its header). Selecting a header in the TUI highlights its bytes; a child
// outside its parent's bytes (the LRH before an InfiniBand item that began
// at the BTH) is shown as not belonging to it.
func TestVerboseRangesNest(t *testing.T) {
	var frames, lines int
	for _, path := range testCaptures(t) {
		for _, f := range testcap.ReadPcap(t, path) {
			var p decode.Packet
			p.Frame.Number, p.Frame.Len = f.Number, f.Len
			decode.Decode(&p, f.Data, decode.LinkType(f.LinkType))
			frames++
			var stack []Line // the ancestors of the current line, with bytes
			for _, l := range Lines(&p, nil) {
				if l.Field == nil {
					continue
				}
				for len(stack) > 0 && stack[len(stack)-1].Depth >= l.Depth {
					stack = stack[:len(stack)-1]
				}
				if l.Off < 0 {
					continue
				}
				lines++
				if len(stack) > 0 {
					a := stack[len(stack)-1]
					if l.Off < a.Off || l.Off+l.Len > a.Off+a.Len {
						t.Errorf("%s frame %d: %q [%d+%d] lies outside %q [%d+%d]",
							f.File, f.Number, l.Text, l.Off, l.Len, a.Text, a.Off, a.Len)
					}
				}
				stack = append(stack, l)
			}
		}
	}
	t.Logf("%d frames, %d lines with bytes", frames, lines)
}

// TestVerboseInfiniBandItem pins what the InfiniBand protocol item covers,
// as tshark 4.0 shows it (-T pdml): from the first InfiniBand header, the
// LRH of a native packet or the GRH of RoCEv1 (the BTH of RoCEv2), through
// the last trailer, the VCRC of a native packet or the ICRC.
func TestVerboseInfiniBandItem(t *testing.T) {
	cases := []struct {
		file  string
		frame int
		want  string
	}{
		{"ib_native.pcap", 1, "InfiniBand [0+58]"},    // LRH .. VCRC, LNH 2
		{"ib_native.pcap", 7, "InfiniBand [0+82]"},    // LRH, GRH .. VCRC, LNH 3
		{"rocev1.pcap", 1, "InfiniBand [14+80]"},      // GRH .. ICRC (tshark: pos 14, size 80)
		{"read_atomic.pcap", 1, "InfiniBand [42+32]"}, // RoCEv2: BTH .. ICRC
	}
	for _, c := range cases {
		dir := "synth"
		if c.file == "read_atomic.pcap" {
			dir = "rxe"
		}
		f := testcap.ReadPcap(t, filepath.Join("../../testdata", dir, c.file))[c.frame-1]
		var p decode.Packet
		p.Frame.Number, p.Frame.Len = f.Number, f.Len
		decode.Decode(&p, f.Data, decode.LinkType(f.LinkType))
		got := ""
		for _, l := range Lines(&p, nil) {
			if l.Field != nil && l.Field.Abbrev == "infiniband" {
				got = fmt.Sprintf("%s [%d+%d]", l.Text, l.Off, l.Len)
			}
		}
		if got != c.want {
			t.Errorf("%s frame %d: %q, want %q", c.file, c.frame, got, c.want)
		}
	}
}

// TestVerboseCMItem: the item Wireshark registers as
// infiniband.smplid.smpdata holds, in a CM MAD, the CM attribute; tshark
// labels it with the CM message ("CM ConnectRequest"), not "SMP Data".
func TestVerboseCMItem(t *testing.T) {
	want := map[string]bool{}
	for _, f := range testcap.ReadPcap(t, "../../testdata/rxe/cm_rping.pcap") {
		var p decode.Packet
		p.Frame.Number, p.Frame.Len = f.Number, f.Len
		decode.Decode(&p, f.Data, decode.LinkType(f.LinkType))
		if p.Has&decode.HdrCM == 0 {
			continue
		}
		for _, l := range Lines(&p, nil) {
			if l.Field == nil || l.Field.Abbrev != "infiniband.smplid.smpdata" {
				continue
			}
			if l.Text != "CM "+decode.CMAttrString(p.CM.AttributeID) || strings.Contains(l.Text, "SMP") {
				t.Errorf("frame %d: CM attribute item labelled %q", f.Number, l.Text)
			}
			want[l.Text] = true
		}
	}
	for _, name := range []string{"CM ConnectRequest", "CM ConnectReply", "CM ReadyToUse", "CM DisconnectRequest", "CM DisconnectReply"} {
		if !want[name] {
			t.Errorf("no %q item in cm_rping.pcap (have %v)", name, want)
		}
	}
}
