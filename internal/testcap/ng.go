package testcap

import (
	"os"
	"strings"
	"testing"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
)

// ReadFile returns every record of a pcap or pcapng file (by its
// extension), with each pcapng record's interface link type.
func ReadFile(t testing.TB, path string) []Frame {
	t.Helper()
	if !strings.HasSuffix(path, ".pcapng") {
		return ReadPcap(t, path)
	}
	return readAll(t, path, func(f *os.File) (recordReader, error) {
		r, err := pcapgo.NewNgReader(f, pcapgo.NgReaderOptions{WantMixedLinkType: true})
		if err != nil {
			return nil, err
		}
		return ngRecords{r}, nil
	})
}

// ngRecords gives each pcapng record its interface's link type.
type ngRecords struct{ r *pcapgo.NgReader }

func (n ngRecords) next() ([]byte, gopacket.CaptureInfo, layers.LinkType, error) {
	data, ci, err := n.r.ReadPacketData()
	if err != nil {
		return nil, ci, 0, err
	}
	ifc, err := n.r.Interface(ci.InterfaceIndex)
	return data, ci, ifc.LinkType, err
}
