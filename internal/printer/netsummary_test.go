package printer

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rocetap/rocetap/decode"
	"github.com/rocetap/rocetap/internal/testcap"
)

// captureDirs are where the test captures live: the repository's, and the
// real captures in ../shared/captures (with ulp/) when present.
var captureDirs = []string{"../../testdata", "../../../shared/captures"}

// TestEveryFrameHasInfo: every frame of every test capture gets a
// non-empty Info column and a Protocol column, RDMA or not (issue 19:
// TCP, ICMPv6 and ARP frames on RoCE captures had none).
func TestEveryFrameHasInfo(t *testing.T) {
	d := decode.NewDecoder()
	var p decode.Packet
	files, frames := 0, 0
	for _, dir := range captureDirs {
		if _, err := os.Stat(dir); err != nil {
			t.Logf("%s: %v (skipped)", dir, err)
			continue
		}
		err := filepath.WalkDir(dir, func(path string, e os.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if e.IsDir() && e.Name() == "fuzz" {
				return filepath.SkipDir
			}
			if ext := filepath.Ext(path); ext != ".pcap" && ext != ".pcapng" {
				return nil
			}
			files++
			for _, fr := range testcap.ReadFile(t, path) {
				frames++
				p.Frame = decode.Frame{Number: fr.Number, Len: fr.Len}
				d.Decode(&p, fr.Data, fr.LinkType)
				if info := AppendInfo(nil, &p); len(info) == 0 {
					t.Errorf("%s frame %d: empty Info (protocol %s)", path, fr.Number, Protocol(&p))
				}
				if Protocol(&p) == "" || Protocol(&p) == "Unknown" {
					t.Errorf("%s frame %d: Protocol %q", path, fr.Number, Protocol(&p))
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if frames == 0 {
		t.Fatal("no frames read")
	}
	t.Logf("%d frames of %d files", frames, files)
}

// TestVerboseIPoIBOverRoCEv2: the -V tree of a RoCEv2 packet whose IPoIB
// SEND carries a UDP datagram has the RoCEv2 IP and UDP headers before
// InfiniBand and the carried ones after the IPoIB header, each with its
// own addresses, ports and bytes.
func TestVerboseIPoIBOverRoCEv2(t *testing.T) {
	fr := testcap.ReadFile(t, "../../testdata/synth/summaries.pcap")[21] // frame 22
	var p decode.Packet
	p.Frame = decode.Frame{Number: fr.Number, Len: fr.Len}
	decode.Decode(&p, fr.Data, fr.LinkType)
	var headers []string
	for _, l := range Lines(&p, nil) {
		if l.Depth == 0 && l.Field != nil && l.Field.Abbrev != "frame" && l.Field.Abbrev != "rocetap" {
			headers = append(headers, l.Text)
		}
	}
	want := []string{
		"Ethernet II, Src: 02:00:5e:10:00:0a, Dst: 02:00:5e:10:00:0b",
		"Internet Protocol Version 6, Src: fd00:77::a, Dst: fd00:77::b",
		"User Datagram Protocol, Src Port: 53799, Dst Port: 4791",
		"InfiniBand",
		"IP over Infiniband",
		"Internet Protocol Version 4, Src: 10.77.0.1, Dst: 10.77.0.2",
		"User Datagram Protocol, Src Port: 40000, Dst Port: 40001",
		"Data",
	}
	if strings.Join(headers, "\n") != strings.Join(want, "\n") {
		t.Errorf("headers:\n%s\nwant:\n%s", strings.Join(headers, "\n"), strings.Join(want, "\n"))
	}
}
