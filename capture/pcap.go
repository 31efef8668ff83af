package capture

import (
	"encoding/binary"
	"fmt"
	"time"

	"github.com/gopacket/gopacket/layers"
)

// Classic pcap file header (24 bytes), in the writer's byte order:
//
//	 0                   1                   2                   3
//	+---------------+---------------+---------------+---------------+
//	|                 magic a1b2c3d4 (us) / a1b23c4d (ns)           |
//	|        version major        |         version minor           |
//	|                    thiszone (ignored)                         |
//	|                    sigfigs (ignored)                          |
//	|                    snaplen                                    |
//	| FCS len |F|   reserved      |          link type              |
//	+---------------------------------------------------------------+
//
// Each record: ts_sec, ts_frac (us or ns), incl_len, orig_len (4 bytes each),
// then incl_len bytes of packet.
const (
	pcapFileHeaderLen   = 24
	pcapRecordHeaderLen = 16
)

func (r *Reader) initPcap() error {
	if err := r.fill(pcapFileHeaderLen); err != nil {
		if err != errShort {
			return err
		}
		return &FormatError{File: r.name, Packet: 1, Offset: 0, Truncated: true,
			Reason: "file ends inside the 24-byte pcap file header"}
	}
	h := r.buf[r.pos : r.pos+pcapFileHeaderLen]
	r.format = formatPcap
	switch binary.LittleEndian.Uint32(h) {
	case 0xa1b2c3d4:
		r.fname, r.tsMul = "pcap", 1000
	case 0xd4c3b2a1:
		r.fname, r.tsMul, r.bigEndian = "pcap", 1000, true
	case 0xa1b23c4d:
		r.fname, r.tsMul = "pcap-ns", 1
	case 0x4d3cb2a1:
		r.fname, r.tsMul, r.bigEndian = "pcap-ns", 1, true
	default:
		return &FormatError{File: r.name, Packet: 1, Offset: 0,
			Reason: "no pcap magic number (a1b2c3d4 or a1b23c4d) at the start of the file"}
	}
	r.snaplen = r.u32(h[16:])
	lt := r.u32(h[20:])
	r.linkType = layers.LinkType(lt)
	if lt&0x04000000 != 0 { // FCS length present, in 16-bit words
		r.fcsLen = 2 * int(lt>>28)
	}
	r.limit = min(max(r.snaplen, standardSnaplen), maxRecordSize)
	r.pos += pcapFileHeaderLen
	return nil
}

func (r *Reader) nextPcap(info *PacketInfo) ([]byte, error) {
	if r.end-r.pos < pcapRecordHeaderLen {
		if err := r.fill(pcapRecordHeaderLen); err != nil {
			if err == errShort && r.atEOF() {
				return r.setEOF()
			}
			return r.failFill(err, "the 16-byte record header", pcapRecordHeaderLen)
		}
	}
	h := r.buf[r.pos : r.pos+pcapRecordHeaderLen]
	var sec, frac, incl, orig uint32
	if r.bigEndian {
		sec = binary.BigEndian.Uint32(h)
		frac = binary.BigEndian.Uint32(h[4:])
		incl = binary.BigEndian.Uint32(h[8:])
		orig = binary.BigEndian.Uint32(h[12:])
	} else {
		sec = binary.LittleEndian.Uint32(h)
		frac = binary.LittleEndian.Uint32(h[4:])
		incl = binary.LittleEndian.Uint32(h[8:])
		orig = binary.LittleEndian.Uint32(h[12:])
	}
	if incl > r.limit {
		return r.failCaplen(incl)
	}
	n := pcapRecordHeaderLen + int(incl)
	if r.end-r.pos < n {
		if err := r.fill(n); err != nil {
			return r.failFill(err, fmt.Sprintf("the record (16-byte header and %d bytes of packet)", incl), n)
		}
	}
	off := r.pos
	r.pos += n
	r.recOff = r.base + int64(off)
	r.num++
	info.Timestamp = time.Unix(int64(sec), int64(frac)*r.tsMul)
	info.CaptureLength = int(incl)
	info.Length = int(orig)
	info.LinkType = r.linkType
	info.InterfaceIndex = 0
	return r.buf[off+pcapRecordHeaderLen : off+n : off+n], nil
}

func (r *Reader) failCaplen(incl uint32) ([]byte, error) {
	switch {
	case r.snaplen > maxRecordSize:
		return r.fail(false, "record says %d bytes captured, more than the %d MiB limit", incl, maxRecordSize>>20)
	case r.snaplen < standardSnaplen:
		return r.fail(false, "record says %d bytes captured but the snapshot length is %d (at most %d accepted)", incl, r.snaplen, r.limit)
	}
	return r.fail(false, "record says %d bytes captured but the snapshot length is %d", incl, r.snaplen)
}
