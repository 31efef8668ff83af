package capture

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"time"

	"github.com/gopacket/gopacket/layers"
)

// The writers below make several small writes per packet and allocate
// nothing per packet. Wrap the destination in a bufio.Writer and Flush it
// when done; they do not buffer themselves.

// PcapWriter writes a classic little-endian pcap file.
type PcapWriter struct {
	w       io.Writer
	snaplen int
	nano    bool
	hdr     [pcapRecordHeaderLen]byte
}

// NewPcapWriter writes a pcap file header to w and returns a writer for its
// packets. snaplen <= 0 means 262144; packets longer than snaplen are cut to
// it. nanosecond selects the a1b23c4d magic and nanosecond timestamps.
func NewPcapWriter(w io.Writer, linkType layers.LinkType, snaplen int, nanosecond bool) (*PcapWriter, error) {
	if snaplen <= 0 {
		snaplen = standardSnaplen
	}
	if snaplen > maxRecordSize {
		return nil, fmt.Errorf("pcap writer: snapshot length %d is over the %d-byte limit", snaplen, maxRecordSize)
	}
	var h [pcapFileHeaderLen]byte
	magic := uint32(0xa1b2c3d4)
	if nanosecond {
		magic = 0xa1b23c4d
	}
	le := binary.LittleEndian
	le.PutUint32(h[0:], magic)
	le.PutUint16(h[4:], 2)
	le.PutUint16(h[6:], 4)
	le.PutUint32(h[16:], uint32(snaplen))
	le.PutUint32(h[20:], uint32(linkType))
	if _, err := w.Write(h[:]); err != nil {
		return nil, err
	}
	return &PcapWriter{w: w, snaplen: snaplen, nano: nanosecond}, nil
}

// WritePacket writes one record. It uses info.Timestamp (the zero Time is
// written as the epoch) and info.Length, the length on the wire (0 means
// len(data)); info.CaptureLength is ignored: len(data), cut to the snapshot
// length, is what is written. It allocates nothing.
func (w *PcapWriter) WritePacket(info PacketInfo, data []byte) error {
	length, err := wireLength(info.Length, len(data))
	if err != nil {
		return err
	}
	if len(data) > w.snaplen {
		data = data[:w.snaplen]
	}
	var sec, frac int64
	if !info.Timestamp.IsZero() {
		sec = info.Timestamp.Unix()
		frac = int64(info.Timestamp.Nanosecond())
		if !w.nano {
			frac /= 1000
		}
	}
	if sec < 0 || sec > math.MaxUint32 {
		return fmt.Errorf("pcap writer: timestamp %v is outside the 1970-2106 range of pcap", info.Timestamp)
	}
	le := binary.LittleEndian
	le.PutUint32(w.hdr[0:], uint32(sec))
	le.PutUint32(w.hdr[4:], uint32(frac))
	le.PutUint32(w.hdr[8:], uint32(len(data)))
	le.PutUint32(w.hdr[12:], length)
	if _, err := w.w.Write(w.hdr[:]); err != nil {
		return err
	}
	_, err = w.w.Write(data)
	return err
}

func wireLength(length, caplen int) (uint32, error) {
	if length == 0 {
		return uint32(caplen), nil
	}
	if length < caplen || length > math.MaxUint32 {
		return 0, fmt.Errorf("capture writer: packet length %d is invalid for %d bytes of data", length, caplen)
	}
	return uint32(length), nil
}

// PcapngWriter writes a little-endian pcapng file with one section.
type PcapngWriter struct {
	w      io.Writer
	ifaces []ngWriterInterface
	hdr    [28]byte
	tail   [8]byte
}

type ngWriterInterface struct {
	snaplen int
	nano    bool
}

// NewPcapngWriter writes a Section Header Block to w. Add at least one
// interface before writing packets.
func NewPcapngWriter(w io.Writer) (*PcapngWriter, error) {
	const appl = "rocetap"
	opts := ngAppendOption(nil, 4, []byte(appl)) // shb_userappl
	opts = append(opts, 0, 0, 0, 0)              // opt_endofopt
	blen := 8 + 16 + len(opts) + 4
	b := make([]byte, 0, blen)
	le := binary.LittleEndian
	b = le.AppendUint32(b, ngBlockSHB)
	b = le.AppendUint32(b, uint32(blen))
	b = le.AppendUint32(b, ngByteOrderMagic)
	b = le.AppendUint16(b, 1)
	b = le.AppendUint16(b, 0)
	b = le.AppendUint64(b, math.MaxUint64) // section length unknown
	b = append(b, opts...)
	b = le.AppendUint32(b, uint32(blen))
	if _, err := w.Write(b); err != nil {
		return nil, err
	}
	return &PcapngWriter{w: w}, nil
}

// ngAppendOption appends a little-endian option padded to 32 bits.
func ngAppendOption(b []byte, code uint16, v []byte) []byte {
	b = binary.LittleEndian.AppendUint16(b, code)
	b = binary.LittleEndian.AppendUint16(b, uint16(len(v)))
	b = append(b, v...)
	for range (4 - len(v)%4) % 4 {
		b = append(b, 0)
	}
	return b
}

// InterfaceOptions are the optional fields of an Interface Description
// Block. Empty strings are left out.
type InterfaceOptions struct {
	Name        string // if_name: what was captured on ("eth0", "mlx5_0")
	Description string // if_description: free text
	Filter      string // if_filter: the capture filter, as a libpcap expression
	Nanoseconds bool   // if_tsresol 9: nanosecond timestamps instead of the default microseconds
}

// AddInterface writes an Interface Description Block and returns its index,
// to be used as PacketInfo.InterfaceIndex. snaplen <= 0 means no limit;
// name, if not empty, is written as if_name; tsresolNanos selects nanosecond
// timestamps (if_tsresol 9) instead of the default microseconds.
func (w *PcapngWriter) AddInterface(linkType layers.LinkType, snaplen int, name string, tsresolNanos bool) (int, error) {
	return w.AddInterfaceWith(linkType, snaplen, InterfaceOptions{Name: name, Nanoseconds: tsresolNanos})
}

// AddInterfaceWith is AddInterface with every option it can write.
func (w *PcapngWriter) AddInterfaceWith(linkType layers.LinkType, snaplen int, o InterfaceOptions) (int, error) {
	if snaplen < 0 {
		snaplen = 0
	}
	if snaplen > maxRecordSize {
		return 0, fmt.Errorf("pcapng writer: snapshot length %d is over the %d-byte limit", snaplen, maxRecordSize)
	}
	const maxOpt = 0xfff0
	switch {
	case len(o.Name) > maxOpt:
		return 0, errors.New("pcapng writer: interface name too long")
	case len(o.Description) > maxOpt:
		return 0, errors.New("pcapng writer: interface description too long")
	case len(o.Filter) > maxOpt-1:
		return 0, errors.New("pcapng writer: capture filter too long")
	}
	var opts []byte
	if o.Name != "" {
		opts = ngAppendOption(opts, ngOptIfName, []byte(o.Name))
	}
	if o.Description != "" {
		opts = ngAppendOption(opts, ngOptIfDescription, []byte(o.Description))
	}
	if o.Nanoseconds {
		opts = ngAppendOption(opts, ngOptTSResol, []byte{9})
	}
	if o.Filter != "" {
		// The first byte says what follows: 0 is a libpcap filter string.
		opts = ngAppendOption(opts, ngOptIfFilter, append([]byte{0}, o.Filter...))
	}
	if opts != nil {
		opts = append(opts, 0, 0, 0, 0)
	}
	blen := 8 + 8 + len(opts) + 4
	le := binary.LittleEndian
	b := make([]byte, 0, blen)
	b = le.AppendUint32(b, ngBlockIDB)
	b = le.AppendUint32(b, uint32(blen))
	b = le.AppendUint16(b, uint16(linkType))
	b = le.AppendUint16(b, 0)
	b = le.AppendUint32(b, uint32(snaplen))
	b = append(b, opts...)
	b = le.AppendUint32(b, uint32(blen))
	if _, err := w.w.Write(b); err != nil {
		return 0, err
	}
	w.ifaces = append(w.ifaces, ngWriterInterface{snaplen: snaplen, nano: o.Nanoseconds})
	return len(w.ifaces) - 1, nil
}

// Options of the blocks PcapngWriter writes (ngOptTSResol is in pcapng.go).
const (
	ngOptIfName        = 2
	ngOptIfDescription = 3
	ngOptIfFilter      = 11

	ngOptISBStartTime = 2
	ngOptISBEndTime   = 3
	ngOptISBIfRecv    = 4
	ngOptISBIfDrop    = 5
	ngOptISBOSDrop    = 7
)

// ticks converts t to the interface's timestamp units; the zero Time is 0.
func (f ngWriterInterface) ticks(t time.Time) (uint64, error) {
	if t.IsZero() {
		return 0, nil
	}
	sec, ns := t.Unix(), uint64(t.Nanosecond())
	if sec < 0 {
		return 0, fmt.Errorf("pcapng writer: timestamp %v is before 1970", t)
	}
	if f.nano {
		if sec > math.MaxInt64/1_000_000_000-1 {
			return 0, fmt.Errorf("pcapng writer: timestamp %v is too late", t)
		}
		return uint64(sec)*1e9 + ns, nil
	}
	return uint64(sec)*1e6 + ns/1e3, nil
}

// WritePacket writes an Enhanced Packet Block on interface
// info.InterfaceIndex, using info.Timestamp and info.Length as PcapWriter
// does. Data longer than the interface's snapshot length is cut to it.
func (w *PcapngWriter) WritePacket(info PacketInfo, data []byte) error {
	id := info.InterfaceIndex
	if id < 0 || id >= len(w.ifaces) {
		return fmt.Errorf("pcapng writer: interface %d was not added (have %d)", id, len(w.ifaces))
	}
	f := w.ifaces[id]
	length, err := wireLength(info.Length, len(data))
	if err != nil {
		return err
	}
	if f.snaplen > 0 && len(data) > f.snaplen {
		data = data[:f.snaplen]
	}
	if len(data) > maxRecordSize {
		return fmt.Errorf("pcapng writer: %d-byte packet is over the %d-byte limit", len(data), maxRecordSize)
	}
	ts, err := f.ticks(info.Timestamp)
	if err != nil {
		return err
	}
	pad := (4 - len(data)%4) % 4
	blen := 32 + len(data) + pad
	le := binary.LittleEndian
	le.PutUint32(w.hdr[0:], ngBlockEPB)
	le.PutUint32(w.hdr[4:], uint32(blen))
	le.PutUint32(w.hdr[8:], uint32(id))
	le.PutUint32(w.hdr[12:], uint32(ts>>32))
	le.PutUint32(w.hdr[16:], uint32(ts))
	le.PutUint32(w.hdr[20:], uint32(len(data)))
	le.PutUint32(w.hdr[24:], length)
	if _, err := w.w.Write(w.hdr[:]); err != nil {
		return err
	}
	if _, err := w.w.Write(data); err != nil {
		return err
	}
	w.tail = [8]byte{}
	le.PutUint32(w.tail[pad:], uint32(blen))
	_, err = w.w.Write(w.tail[:pad+4])
	return err
}

// InterfaceStats are the counters of an Interface Statistics Block. A zero
// Start or End, or a false Has field, leaves that option out. The counters
// count from Start (or from the start of the capture when Start is zero).
type InterfaceStats struct {
	Timestamp time.Time // when the counters were taken (the block's own timestamp)
	Start     time.Time // isb_starttime
	End       time.Time // isb_endtime

	Received    uint64 // isb_ifrecv: packets received
	HasReceived bool
	IfDrops     uint64 // isb_ifdrop: packets the interface dropped for lack of resources
	HasIfDrops  bool
	OSDrops     uint64 // isb_osdrop: packets the operating system dropped (a full capture ring)
	HasOSDrops  bool
}

// ngISBLen is the length of the Interface Statistics Block for st.
func ngISBLen(st InterfaceStats) int {
	n := 24 // type, length, interface, timestamp, trailing length
	opts := 0
	for _, has := range []bool{!st.Start.IsZero(), !st.End.IsZero(), st.HasReceived, st.HasIfDrops, st.HasOSDrops} {
		if has {
			opts++
		}
	}
	if opts > 0 {
		n += opts*12 + 4 // 64-bit values, then opt_endofopt
	}
	return n
}

// WriteInterfaceStats writes an Interface Statistics Block (pcapng block
// type 5) for interface iface, usually as the last block of a file. Its
// times are in the interface's resolution.
//
//	+---------------------------------------------------------------+
//	|                     block type = 0x00000005                   |
//	|                      block total length                       |
//	|                         interface id                          |
//	|                       timestamp (high)                        |
//	|                       timestamp (low)                         |
//	/   options: isb_starttime (2), isb_endtime (3), isb_ifrecv (4), /
//	/      isb_ifdrop (5), isb_osdrop (7), each 8 bytes, then end    /
//	|                      block total length                       |
//	+---------------------------------------------------------------+
func (w *PcapngWriter) WriteInterfaceStats(iface int, st InterfaceStats) error {
	if iface < 0 || iface >= len(w.ifaces) {
		return fmt.Errorf("pcapng writer: interface %d was not added (have %d)", iface, len(w.ifaces))
	}
	f := w.ifaces[iface]
	ts, err := f.ticks(st.Timestamp)
	if err != nil {
		return err
	}
	blen := ngISBLen(st)
	le := binary.LittleEndian
	b := make([]byte, 0, blen)
	b = le.AppendUint32(b, ngBlockISB)
	b = le.AppendUint32(b, uint32(blen))
	b = le.AppendUint32(b, uint32(iface))
	b = le.AppendUint32(b, uint32(ts>>32))
	b = le.AppendUint32(b, uint32(ts))
	// Times are written as in a packet block: high 32 bits first. Counters
	// are plain 64-bit integers.
	for _, o := range []struct {
		code uint16
		t    time.Time
	}{{ngOptISBStartTime, st.Start}, {ngOptISBEndTime, st.End}} {
		if o.t.IsZero() {
			continue
		}
		v, err := f.ticks(o.t)
		if err != nil {
			return err
		}
		b = le.AppendUint16(b, o.code)
		b = le.AppendUint16(b, 8)
		b = le.AppendUint32(b, uint32(v>>32))
		b = le.AppendUint32(b, uint32(v))
	}
	for _, o := range []struct {
		code uint16
		v    uint64
		has  bool
	}{{ngOptISBIfRecv, st.Received, st.HasReceived}, {ngOptISBIfDrop, st.IfDrops, st.HasIfDrops}, {ngOptISBOSDrop, st.OSDrops, st.HasOSDrops}} {
		if o.has {
			b = le.AppendUint16(b, o.code)
			b = le.AppendUint16(b, 8)
			b = le.AppendUint64(b, o.v)
		}
	}
	if len(b) > 20 {
		b = append(b, 0, 0, 0, 0) // opt_endofopt
	}
	b = le.AppendUint32(b, uint32(blen))
	_, err = w.w.Write(b)
	return err
}

// ERFWriter writes a native ERF file: records back to back, no file header.
type ERFWriter struct {
	w io.Writer
}

// NewERFWriter returns a writer of ERF records to w.
func NewERFWriter(w io.Writer) *ERFWriter { return &ERFWriter{w: w} }

// WriteRecord writes one complete ERF record (16-byte header, extension
// headers, subheader and packet). Its rlen field must equal len(record).
func (w *ERFWriter) WriteRecord(record []byte) error {
	if len(record) < erfHeaderLen {
		return fmt.Errorf("erf writer: %d-byte record is shorter than the 16-byte ERF header", len(record))
	}
	if rlen := int(binary.BigEndian.Uint16(record[10:])); rlen != len(record) {
		return fmt.Errorf("erf writer: record is %d bytes but its rlen field says %d", len(record), rlen)
	}
	_, err := w.w.Write(record)
	return err
}

// ERFTimestamp converts t to an ERF 32.32 fixed-point timestamp, for
// building records to give to ERFWriter.
func ERFTimestamp(t time.Time) uint64 {
	return uint64(t.Unix())<<32 | (uint64(t.Nanosecond())<<32+5e8)/1e9
}
