package capture

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"time"
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
func NewPcapWriter(w io.Writer, linkType uint16, snaplen int, nanosecond bool) (*PcapWriter, error) {
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

// AddInterface writes an Interface Description Block and returns its index,
// to be used as PacketInfo.InterfaceIndex. snaplen <= 0 means no limit;
// name, if not empty, is written as if_name; tsresolNanos selects nanosecond
// timestamps (if_tsresol 9) instead of the default microseconds.
func (w *PcapngWriter) AddInterface(linkType uint16, snaplen int, name string, tsresolNanos bool) (int, error) {
	if snaplen < 0 {
		snaplen = 0
	}
	if snaplen > maxRecordSize {
		return 0, fmt.Errorf("pcapng writer: snapshot length %d is over the %d-byte limit", snaplen, maxRecordSize)
	}
	if len(name) > 0xfff0 {
		return 0, errors.New("pcapng writer: interface name too long")
	}
	var opts []byte
	if name != "" {
		opts = ngAppendOption(opts, 2, []byte(name)) // if_name
	}
	if tsresolNanos {
		opts = ngAppendOption(opts, ngOptTSResol, []byte{9})
	}
	if opts != nil {
		opts = append(opts, 0, 0, 0, 0)
	}
	blen := 8 + 8 + len(opts) + 4
	le := binary.LittleEndian
	b := make([]byte, 0, blen)
	b = le.AppendUint32(b, ngBlockIDB)
	b = le.AppendUint32(b, uint32(blen))
	b = le.AppendUint16(b, linkType)
	b = le.AppendUint16(b, 0)
	b = le.AppendUint32(b, uint32(snaplen))
	b = append(b, opts...)
	b = le.AppendUint32(b, uint32(blen))
	if _, err := w.w.Write(b); err != nil {
		return 0, err
	}
	w.ifaces = append(w.ifaces, ngWriterInterface{snaplen: snaplen, nano: tsresolNanos})
	return len(w.ifaces) - 1, nil
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
	var ts uint64
	if t := info.Timestamp; !t.IsZero() {
		sec, ns := t.Unix(), uint64(t.Nanosecond())
		if sec < 0 {
			return fmt.Errorf("pcapng writer: timestamp %v is before 1970", t)
		}
		if f.nano {
			if sec > math.MaxInt64/1_000_000_000-1 {
				return fmt.Errorf("pcapng writer: timestamp %v is too late", t)
			}
			ts = uint64(sec)*1e9 + ns
		} else {
			ts = uint64(sec)*1e6 + ns/1e3
		}
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
