package capture

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/gopacket/gopacket/layers"
)

// TestNextIntoSetsAll: NextInto into one reused PacketInfo, spoiled
// before every call, gives what Next gives, on every test capture and on
// a pcapng whose Simple Packet Block (no time, interface 0) follows a
// packet on interface 1.
func TestNextIntoSetsAll(t *testing.T) {
	g := &ngBuild{}
	g.shb(binary.LittleEndian)
	g.idb(layers.LinkTypeEthernet, 0, -1, 0)
	g.idb(layers.LinkTypeRaw, 0, -1, 0)
	g.epb(1, 1700000000000000, 60, make([]byte, 60))
	g.spb(60, make([]byte, 60))
	spb := filepath.Join(t.TempDir(), "spb.pcapng")
	if err := os.WriteFile(spb, g.buf, 0o644); err != nil {
		t.Fatal(err)
	}
	// A big-endian pcap takes nextPcap, not Next's fast path.
	be := filepath.Join(t.TempDir(), "be.pcap")
	pk := pkt{data: make([]byte, 60), info: PacketInfo{Timestamp: time.Unix(1700000000, 0), CaptureLength: 60, Length: 60}}
	if err := os.WriteFile(be, pcapBuild(binary.BigEndian, false, 1, 65535, []pkt{pk, pk}), 0o644); err != nil {
		t.Fatal(err)
	}
	paths := []string{spb, be}
	for _, glob := range []string{"../testdata/rxe/*.pcap", "../testdata/synth/*", "testdata/*.pcapng", "testdata/*.erf"} {
		m, _ := filepath.Glob(glob)
		paths = append(paths, m...)
	}
	if len(paths) < 40 {
		t.Fatalf("%d captures: want the testdata", len(paths))
	}
	for _, path := range paths {
		a, err := Open(path)
		if err != nil {
			t.Fatal(err)
		}
		b, err := Open(path)
		if err != nil {
			t.Fatal(err)
		}
		var info PacketInfo
		for n := 1; ; n++ {
			wantData, want, wantErr := a.Next()
			info = PacketInfo{Timestamp: time.Unix(1, 1), CaptureLength: -1, Length: -1, InterfaceIndex: 7, LinkType: 9}
			data, err := b.NextInto(&info)
			if (err == nil) != (wantErr == nil) || (err != nil && err.Error() != wantErr.Error()) {
				t.Fatalf("%s: packet %d: NextInto error %v, Next %v", path, n, err, wantErr)
			}
			if err != nil {
				break
			}
			if !bytes.Equal(data, wantData) || info != want {
				t.Fatalf("%s: packet %d: NextInto gives %+v, Next %+v", path, n, info, want)
			}
		}
		a.Close()
		b.Close()
	}
}
