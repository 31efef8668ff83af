package printer

import (
	"os"
	"path/filepath"
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
