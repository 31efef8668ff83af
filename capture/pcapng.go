package capture

import (
	"encoding/binary"
	"fmt"
	"math/bits"
	"time"

	"github.com/gopacket/gopacket/layers"
)

// Every pcapng block has the same frame:
//
//	+---------------------------------------------------------------+
//	|                         block type                            |
//	|                      block total length                       |
//	/                 block body (padded to 32 bits)                /
//	|                      block total length                       |
//	+---------------------------------------------------------------+
//
// The Section Header Block's body starts with the byte-order magic
// 1a2b3c4d, which sets the byte order of its whole section.
const (
	ngBlockIDB = 0x00000001 // Interface Description Block
	ngBlockOPB = 0x00000002 // Packet Block (obsolete)
	ngBlockSPB = 0x00000003 // Simple Packet Block
	ngBlockNRB = 0x00000004 // Name Resolution Block
	ngBlockISB = 0x00000005 // Interface Statistics Block
	ngBlockEPB = 0x00000006 // Enhanced Packet Block
	ngBlockDSB = 0x0000000A // Decryption Secrets Block
	ngBlockSHB = 0x0A0D0D0A // Section Header Block (a palindrome: same in both byte orders)

	ngByteOrderMagic = 0x1A2B3C4D

	ngOptEnd      = 0
	ngOptTSResol  = 9
	ngOptTSOffset = 14

	ngMinBlock = 12 // type, length, trailing length
)

// ngInterface is what packets need from an Interface Description Block.
type ngInterface struct {
	linkType layers.LinkType
	snaplen  uint32
	tsKind   uint8
	shift    uint   // binary resolution: 2^-shift seconds
	units    uint64 // decimal resolution: units per second
	offset   int64  // if_tsoffset, seconds
}

const (
	tsMicro   = iota // 10^-6, the default
	tsNano           // 10^-9
	tsDecimal        // 10^-n, any other n
	tsBinary         // 2^-n
)

func (f *ngInterface) timestamp(ts uint64) time.Time {
	var sec, nsec uint64
	switch f.tsKind {
	case tsMicro:
		sec, nsec = ts/1e6, ts%1e6*1e3
	case tsNano:
		sec, nsec = ts/1e9, ts%1e9
	case tsDecimal:
		sec = ts / f.units
		frac := ts % f.units
		if f.units <= 1e9 {
			nsec = frac * (1e9 / f.units)
		} else {
			nsec = frac / (f.units / 1e9)
		}
	default:
		sec = ts >> f.shift
		hi, lo := bits.Mul64(ts&(1<<f.shift-1), 1e9)
		nsec = hi<<(64-f.shift) | lo>>f.shift
	}
	return time.Unix(int64(sec)+f.offset, int64(nsec))
}

// setResolution applies an if_tsresol value; false if it cannot be
// represented in 64 bits.
func (f *ngInterface) setResolution(v uint8) bool {
	exp := uint(v & 0x7f)
	switch {
	case v&0x80 != 0 && exp > 0:
		if exp > 63 {
			return false
		}
		f.tsKind, f.shift = tsBinary, exp
	case v&0x80 == 0 && exp == 6:
		f.tsKind = tsMicro
	case v&0x80 == 0 && exp == 9:
		f.tsKind = tsNano
	default: // 10^-exp (2^-0 is also one unit per second)
		if exp > 19 {
			return false
		}
		f.tsKind, f.units = tsDecimal, 1
		for range exp {
			f.units *= 10
		}
	}
	return true
}

func ngBlockName(t uint32) string {
	switch t {
	case ngBlockSHB:
		return "Section Header Block"
	case ngBlockIDB:
		return "Interface Description Block"
	case ngBlockEPB:
		return "Enhanced Packet Block"
	case ngBlockSPB:
		return "Simple Packet Block"
	case ngBlockOPB:
		return "Packet Block"
	case ngBlockNRB:
		return "Name Resolution Block"
	case ngBlockISB:
		return "Interface Statistics Block"
	case ngBlockDSB:
		return "Decryption Secrets Block"
	}
	return fmt.Sprintf("block of type 0x%08x", t)
}

func (r *Reader) initPcapng() error {
	r.format, r.fname = formatPcapng, "pcapng"
	if err := r.fill(ngMinBlock); err != nil {
		if err != errShort {
			return err
		}
		return &FormatError{File: r.name, Packet: 1, Offset: 0, Truncated: true,
			Reason: "file ends inside the first pcapng Section Header Block"}
	}
	if binary.LittleEndian.Uint32(r.buf[r.pos:]) != ngBlockSHB {
		return &FormatError{File: r.name, Packet: 1, Offset: 0,
			Reason: "a pcapng file must start with a Section Header Block (0a0d0d0a)"}
	}
	if !r.setByteOrder(r.buf[r.pos+8 : r.pos+12]) {
		return &FormatError{File: r.name, Packet: 1, Offset: 0,
			Reason: fmt.Sprintf("section header byte-order magic is %x, expected 1a2b3c4d in either byte order", r.buf[r.pos+8:r.pos+12])}
	}
	return nil
}

func (r *Reader) setByteOrder(bom []byte) bool {
	switch binary.LittleEndian.Uint32(bom) {
	case ngByteOrderMagic:
		r.bigEndian = false
	case 0x4D3C2B1A:
		r.bigEndian = true
	default:
		return false
	}
	return true
}

func (r *Reader) nextPcapng(info *PacketInfo) ([]byte, error) {
	for {
		if r.end-r.pos < ngMinBlock {
			if err := r.fill(ngMinBlock); err != nil {
				if err == errShort && r.atEOF() {
					return r.setEOF()
				}
				return r.failFill(err, "a pcapng block header", ngMinBlock)
			}
		}
		h := r.buf[r.pos : r.pos+ngMinBlock]
		btype := r.u32(h)
		if btype == ngBlockSHB && !r.setByteOrder(h[8:12]) {
			return r.fail(false, "section header byte-order magic is %x, expected 1a2b3c4d in either byte order", h[8:12])
		}
		blen := r.u32(h[4:])
		switch {
		case blen < ngMinBlock:
			return r.fail(false, "%s has length %d, less than the minimum of 12", ngBlockName(btype), blen)
		case blen%4 != 0:
			return r.fail(false, "%s has length %d, not a multiple of 4", ngBlockName(btype), blen)
		case blen > maxRecordSize:
			return r.fail(false, "%s claims %d bytes, more than the %d MiB limit", ngBlockName(btype), blen, maxRecordSize>>20)
		}
		n := int(blen)
		if r.end-r.pos < n {
			if err := r.fill(n); err != nil {
				return r.failFill(err, fmt.Sprintf("the %d-byte %s", n, ngBlockName(btype)), n)
			}
		}
		b := r.buf[r.pos : r.pos+n]
		if t := r.u32(b[n-4:]); t != blen {
			return r.fail(false, "%s length at its end (%d) does not match the length at its start (%d)", ngBlockName(btype), t, blen)
		}
		body := b[8 : n-4]
		switch btype {
		case ngBlockEPB:
			if len(body) < 20 {
				return r.fail(false, "Enhanced Packet Block of %d bytes is too short (minimum 32)", n)
			}
			return r.packetBlock(info, n, body, r.u32(body), "Enhanced Packet Block")
		case ngBlockSPB:
			if len(body) < 4 {
				return r.fail(false, "Simple Packet Block of %d bytes is too short (minimum 16)", n)
			}
			if len(r.ifaces) == 0 {
				return r.fail(false, "Simple Packet Block before any Interface Description Block in its section")
			}
			orig := r.u32(body)
			if limit := max(uint32(standardSnaplen), r.ifaces[0].snaplen); orig > limit {
				// As Wireshark: an SPB's captured length is its original
				// length (cut to the block), which no packet this long has.
				return r.fail(false, "Simple Packet Block says the packet was %d bytes long, more than the largest packet (%d bytes)", orig, limit)
			}
			caplen := min(orig, uint32(len(body)-4))
			if s := r.ifaces[0].snaplen; s != 0 {
				caplen = min(caplen, s)
			}
			info.Timestamp = time.Time{} // a Simple Packet Block has none
			info.CaptureLength = int(caplen)
			info.Length = int(orig)
			info.InterfaceIndex = 0
			info.LinkType = r.ifaces[0].linkType
			return r.emitNg(n, 12, int(caplen)), nil
		case ngBlockOPB:
			if len(body) < 20 {
				return r.fail(false, "Packet Block of %d bytes is too short (minimum 32)", n)
			}
			return r.packetBlock(info, n, body, uint32(r.u16(body)), "Packet Block")
		case ngBlockIDB:
			if len(body) < 8 {
				return r.fail(false, "Interface Description Block of %d bytes is too short (minimum 20)", n)
			}
			if err := r.checkOptions(body[8:], "Interface Description Block"); err != nil {
				return nil, err
			}
			f := ngInterface{linkType: layers.LinkType(r.u16(body)), snaplen: r.u32(body[4:])}
			if v, ok := r.ngOption(body[8:], ngOptTSResol, 1); ok && !f.setResolution(v[0]) {
				return r.fail(false, "interface %d has timestamp resolution %s, too fine for 64-bit timestamps", len(r.ifaces), resolName(v[0]))
			}
			if v, ok := r.ngOption(body[8:], ngOptTSOffset, 8); ok {
				f.offset = int64(r.u64(v))
			}
			r.speeds.add(len(r.ifaces), r.ngSpeed(body[8:]))
			r.ifaces = append(r.ifaces, f)
		case ngBlockSHB:
			if len(body) < 16 {
				return r.fail(false, "Section Header Block of %d bytes is too short (minimum 28)", n)
			}
			if major := r.u16(body[4:]); major != 1 {
				return r.fail(false, "pcapng version %d.%d is not supported (only 1.x)", major, r.u16(body[6:]))
			}
			r.ifaces = r.ifaces[:0]
		}
		r.pos += n
	}
}

// emitNg returns the packet at [dataOff, dataOff+caplen) of the n-byte block
// at buf[pos] and moves past the block.
// packetBlock finishes an Enhanced Packet Block or an obsolete Packet
// Block: both hold the interface, a 64-bit timestamp, the captured and
// original lengths at body[4:20], and the data at offset 28 of the block.
func (r *Reader) packetBlock(info *PacketInfo, n int, body []byte, ifid uint32, name string) ([]byte, error) {
	if ifid >= uint32(len(r.ifaces)) {
		return r.failIface(ifid)
	}
	caplen := r.u32(body[12:])
	if caplen > uint32(len(body)-20) {
		return r.fail(false, "%s says %d bytes captured but the block only has room for %d", name, caplen, len(body)-20)
	}
	if name == "Enhanced Packet Block" {
		if err := r.checkOptions(body[min(len(body), 20+(int(caplen)+3)&^3):], name); err != nil {
			return nil, err
		}
	}
	f := &r.ifaces[ifid]
	ts := uint64(r.u32(body[4:]))<<32 | uint64(r.u32(body[8:]))
	info.Timestamp = f.timestamp(ts)
	info.CaptureLength = int(caplen)
	info.Length = int(r.u32(body[16:]))
	info.InterfaceIndex = int(ifid)
	info.LinkType = f.linkType
	return r.emitNg(n, 28, int(caplen)), nil
}

func (r *Reader) emitNg(n, dataOff, caplen int) []byte {
	off := r.pos
	r.pos += n
	r.recOff = r.base + int64(off)
	r.num++
	s := off + dataOff
	return r.buf[s : s+caplen : s+caplen]
}

func (r *Reader) failIface(ifid uint32) ([]byte, error) {
	if len(r.ifaces) == 0 {
		return r.fail(false, "packet refers to interface %d but its section has no Interface Description Block before it", ifid)
	}
	return r.fail(false, "packet refers to interface %d but its section declares only %d (0..%d)", ifid, len(r.ifaces), len(r.ifaces)-1)
}

// ngOption finds option code in an option list and returns its value if it
// has at least minLen bytes. A malformed list ends the search: options do not
// affect framing, so they are read leniently.
// checkOptions reports a corrupt block when one of its options runs past
// the block (Wireshark: "Not enough data to handle option").
func (r *Reader) checkOptions(opts []byte, block string) error {
	for len(opts) >= 4 {
		c, l := r.u16(opts), int(r.u16(opts[2:]))
		if c == ngOptEnd {
			return nil
		}
		if 4+l > len(opts) {
			_, err := r.fail(false, "%s has an option (code %d) of %d bytes where %d remain in the block", block, c, l, len(opts)-4)
			return err
		}
		opts = opts[min(len(opts), 4+(l+3)&^3):]
	}
	return nil
}

func (r *Reader) ngOption(opts []byte, code uint16, minLen int) ([]byte, bool) {
	for len(opts) >= 4 {
		c, l := r.u16(opts), int(r.u16(opts[2:]))
		if c == ngOptEnd || 4+l > len(opts) {
			return nil, false
		}
		if c == code {
			return opts[4 : 4+l], l >= minLen
		}
		adv := 4 + (l+3)&^3
		if adv > len(opts) {
			return nil, false
		}
		opts = opts[adv:]
	}
	return nil, false
}

func resolName(v uint8) string {
	if v&0x80 != 0 {
		return fmt.Sprintf("2^-%d", v&0x7f)
	}
	return fmt.Sprintf("10^-%d", v)
}
