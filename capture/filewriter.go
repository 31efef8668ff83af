package capture

import (
	"bufio"
	"fmt"
	"io"

	"github.com/gopacket/gopacket/layers"
)

// FileWriter writes packets of any interfaces and link types to a capture
// file, as tshark -w does: pcapng (the default) with one Interface
// Description Block per input interface and link type, nanosecond
// timestamps; or pcap (nanosecond), which holds a single link type.
type FileWriter struct {
	bw     *bufio.Writer
	ng     *PcapngWriter
	pc     *PcapWriter
	linkPc layers.LinkType // pcap: the file's link type
	ifaces map[ifaceKey]int
	format string
}

type ifaceKey struct {
	iface int
	link  layers.LinkType
}

// FileFormats are the formats NewFileWriter writes (-F).
var FileFormats = []string{"pcapng", "pcap"}

// NewFileWriter starts a capture file of format ("pcapng" or "" for
// pcapng, "pcap") on w. A pcap file takes its link type from the first
// packet; with none, it is empty (header only) with link type.
func NewFileWriter(w io.Writer, format string, link layers.LinkType) (*FileWriter, error) {
	fw := &FileWriter{bw: bufio.NewWriterSize(w, 1<<20), ifaces: map[ifaceKey]int{}, format: format, linkPc: link}
	switch format {
	case "", "pcapng":
		fw.format = "pcapng"
		ng, err := NewPcapngWriter(fw.bw)
		if err != nil {
			return nil, err
		}
		fw.ng = ng
	case "pcap":
	default:
		return nil, fmt.Errorf("-F %q: rocetap writes pcapng (the default) or pcap", format)
	}
	return fw, nil
}

// WritePacket writes one packet; info.InterfaceIndex and info.LinkType
// say where it came from.
func (fw *FileWriter) WritePacket(info PacketInfo, data []byte) error {
	if fw.ng != nil {
		k := ifaceKey{info.InterfaceIndex, info.LinkType}
		id, ok := fw.ifaces[k]
		if !ok {
			var err error
			if id, err = fw.ng.AddInterface(info.LinkType, DefaultSnaplen, "", true); err != nil {
				return err
			}
			fw.ifaces[k] = id
		}
		info.InterfaceIndex = id
		return fw.ng.WritePacket(info, data)
	}
	if fw.pc == nil {
		fw.linkPc = info.LinkType
		if err := fw.startPcap(); err != nil {
			return err
		}
	}
	if info.LinkType != fw.linkPc {
		return fmt.Errorf("a pcap file holds one link type: this packet's is %d (%s), the file's %d (%s); write pcapng (-F pcapng), which holds several",
			info.LinkType, info.LinkType, fw.linkPc, fw.linkPc)
	}
	return fw.pc.WritePacket(info, data)
}

func (fw *FileWriter) startPcap() error {
	pc, err := NewPcapWriter(fw.bw, fw.linkPc, DefaultSnaplen, true)
	fw.pc = pc
	return err
}

// Close flushes what is buffered (and writes an empty pcap's header); it
// does not close the underlying writer.
func (fw *FileWriter) Close() error {
	if fw.ng == nil && fw.pc == nil {
		if err := fw.startPcap(); err != nil {
			return err
		}
	}
	return fw.bw.Flush()
}
