// Package synth builds the small synthetic captures in testdata/synth/ that
// exercise every path of rocetap's decoder: every opcode and extended header,
// RoCEv2 over IPv4 and IPv6 with VLAN and QinQ tags, RoCEv1, native
// InfiniBand with its VCRC, ERF records as ibdump writes them, Linux cooked
// and raw-IP link types in one pcapng, PFC and PAUSE frames, nanosecond
// timestamps, snapped frames and frames with wrong CRCs.
//
// Frames are built with the decode layers' SerializeTo and gopacket's own
// layers (Ethernet, Dot1Q, IPv4, IPv6, UDP); the few headers gopacket cannot
// serialize (Linux SLL/SLL2, ERF, 802.3 MAC control) are small layers here.
// decode.FixCRCs fills in the ICRC and VCRC. The files are written with
// gopacket's pcapgo writers, not with rocetap's capture package, so that
// rocetap's reader is checked against an independent writer.
//
// Every record carries the decoding it was built to produce (Want); the
// package's tests decode the committed files and compare. Regenerate the
// files with
//
//	go test ./internal/synth -update
package synth

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"

	"github.com/rocetap/rocetap/decode"
)

// Format is a capture file format.
type Format uint8

// Formats.
const (
	PcapMicro Format = iota // pcap, microsecond timestamps
	PcapNano                // pcap, nanosecond timestamps
	PcapNG                  // pcapng, one interface per link type
)

// Iface is a pcapng interface.
type Iface struct {
	Name     string
	LinkType decode.LinkType
	Speed    uint64 // if_speed in bits/s (0: none), which pcapgo cannot write: setSpeeds adds it
}

// File is one capture file.
type File struct {
	Name     string // file name under testdata/synth/
	Format   Format
	LinkType decode.LinkType // pcap link type (pcap formats)
	SnapLen  uint32          // pcap snapshot length (0: 65535)
	Ifaces   []Iface
	Records  []Record
}

// Record is one captured frame and what decoding it must give.
type Record struct {
	Time  time.Time
	Iface int    // pcapng interface index
	Data  []byte // the captured bytes
	Len   int    // the wire length (>= len(Data))
	Want  Want
}

// LinkTypeOf returns the link type of record r of f.
func (f *File) LinkTypeOf(r *Record) decode.LinkType {
	if f.Format == PcapNG {
		return f.Ifaces[r.Iface].LinkType
	}
	return f.LinkType
}

// Want is what decode.Decode must report for a record. Fields a record does
// not care about are zero; Has and Flags are compared exactly (except the
// bits in Ignore).
type Want struct {
	Note   string // what the frame shows
	Encap  decode.Encapsulation
	Opcode decode.Opcode // when Has includes HdrBTH
	PSN    decode.PSN
	DestQP uint32
	Has    decode.Hdr
	Ignore decode.Hdr // header bits not compared (e.g. MAD on QP1)
	Flags  decode.Flag
	ICRC   decode.CRCStatus
	VCRC   decode.CRCStatus
	VLANs  []uint16 // VLAN IDs, outermost first
	ECN    int      // IP ECN bits, -1 when the frame has no IP header
	PFC    *decode.PFCHdr
	AETH   int // AETH syndrome, -1 when not checked
}

// Encode returns the bytes of the capture file.
func (f *File) Encode() ([]byte, error) {
	var buf bytes.Buffer
	switch f.Format {
	case PcapMicro, PcapNano:
		w := pcapgo.NewWriter(&buf)
		if f.Format == PcapNano {
			w = pcapgo.NewWriterNanos(&buf)
		}
		snap := f.SnapLen
		if snap == 0 {
			snap = 65535
		}
		if err := w.WriteFileHeader(snap, layers.LinkType(f.LinkType)); err != nil {
			return nil, err
		}
		for i := range f.Records {
			r := &f.Records[i]
			if err := w.WritePacket(captureInfo(r), r.Data); err != nil {
				return nil, fmt.Errorf("%s record %d: %w", f.Name, i+1, err)
			}
		}
	case PcapNG:
		// Fixed section and interface options keep the file the same on
		// every machine (the defaults name the OS and architecture).
		opts := pcapgo.NgWriterOptions{SectionInfo: pcapgo.NgSectionInfo{
			Hardware: "none", OS: "none", Application: "rocetap internal/synth",
		}}
		if len(f.Ifaces) == 0 {
			return nil, fmt.Errorf("%s: pcapng needs at least one interface", f.Name)
		}
		w, err := pcapgo.NewNgWriterInterface(&buf, ngIface(f.Ifaces[0]), opts)
		if err != nil {
			return nil, err
		}
		for _, ifc := range f.Ifaces[1:] {
			if _, err := w.AddInterface(ngIface(ifc)); err != nil {
				return nil, err
			}
		}
		for i := range f.Records {
			r := &f.Records[i]
			ci := captureInfo(r)
			ci.InterfaceIndex = r.Iface
			if err := w.WritePacket(ci, r.Data); err != nil {
				return nil, fmt.Errorf("%s record %d: %w", f.Name, i+1, err)
			}
		}
		if err := w.Flush(); err != nil {
			return nil, err
		}
		return setSpeeds(buf.Bytes(), f.Ifaces)
	default:
		return nil, fmt.Errorf("%s: unknown format %d", f.Name, f.Format)
	}
	return buf.Bytes(), nil
}

func ngIface(i Iface) pcapgo.NgInterface {
	return pcapgo.NgInterface{Name: i.Name, OS: "none", LinkType: layers.LinkType(i.LinkType), TimestampResolution: 9}
}

func captureInfo(r *Record) gopacket.CaptureInfo {
	n := r.Len
	if n < len(r.Data) {
		n = len(r.Data)
	}
	return gopacket.CaptureInfo{Timestamp: r.Time, CaptureLength: len(r.Data), Length: n}
}

// WriteDir writes every file into dir.
func WriteDir(dir string) error {
	files, err := Files()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for i := range files {
		b, err := files[i].Encode()
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, files[i].Name), b, 0o644); err != nil {
			return err
		}
	}
	return nil
}
