package capture

import (
	"encoding/binary"
	"time"
)

// ERF record header (16 bytes; the timestamp is little-endian, the rest
// big-endian):
//
//	 0                   1                   2                   3
//	+---------------+---------------+---------------+---------------+
//	|          timestamp: 32.32 fixed-point seconds (little-endian)  |
//	|                                                               |
//	+---------------+---------------+-------------------------------+
//	|E|   type      |     flags     |     rlen (record length)      |
//	+---------------+---------------+-------------------------------+
//	|   lctr (loss counter / color) |     wlen (wire length)        |
//	+-------------------------------+-------------------------------+
//	| 8-byte extension headers while the previous one has bit 7 set |
//	| type-specific subheader (2 bytes for Ethernet, 4 for MC/AAL2) |
//	| packet                                                        |
//
// A native ERF file is just a sequence of such records.
const (
	erfHeaderLen = 16

	erfTypeETH          = 2
	erfTypeMCHDLC       = 5
	erfTypeMCRaw        = 6
	erfTypeMCATM        = 7
	erfTypeMCRawChannel = 8
	erfTypeMCAAL5       = 9
	erfTypeColorETH     = 11
	erfTypeMCAAL2       = 12
	erfTypeDSMColorETH  = 16
	erfTypeColorMCHDLC  = 17
	erfTypeAAL2         = 18
	erfTypeColorHashETH = 20
	erfTypeMeta         = 27
	erfTypeOPA9B        = 29
	erfTypePad          = 48

	// erfChecks is how many records the format sniffer examines at most.
	erfChecks = 20
	// erfMinChecks is how many records must look right unless the file
	// ends cleanly before.
	erfMinChecks = 3
	// erfSniffBytes bounds how far the sniffer reads once it has seen
	// erfMinChecks records. The decision depends only on the data, never on
	// how it arrives.
	erfSniffBytes = 256 << 10
)

// erfHeaderLength returns the length of the ERF header of rec (fixed header,
// extension headers and type-specific subheader), or -1 if it runs past rec.
func erfHeaderLength(rec []byte) int {
	n := erfHeaderLen
	for t := rec[8]; t&0x80 != 0; t = rec[n-8] {
		n += 8
		if n > len(rec) {
			return -1
		}
	}
	switch rec[8] & 0x7f {
	case erfTypeETH, erfTypeColorETH, erfTypeDSMColorETH, erfTypeColorHashETH:
		n += 2
	case erfTypeMCHDLC, erfTypeMCRaw, erfTypeMCATM, erfTypeMCRawChannel, erfTypeMCAAL5,
		erfTypeMCAAL2, erfTypeColorMCHDLC, erfTypeAAL2:
		n += 4
	}
	if n > len(rec) {
		return -1
	}
	return n
}

func erfKnownType(t uint8) bool {
	t &= 0x7f
	return (t >= 1 && t <= 29 && t != 26) || t == erfTypePad
}

func erfTime(ts uint64) time.Time {
	// Round the 32-bit binary fraction to the nearest nanosecond.
	ns := ((ts&0xffffffff)*1e9 + 1<<31) >> 32
	return time.Unix(int64(ts>>32), int64(ns))
}

// looksLikeERF checks the first records as Wireshark does: known types,
// sane lengths, timestamps neither running backwards (by more than a second)
// nor jumping ahead by more than a year.
func (r *Reader) looksLikeERF() bool {
	off := r.pos
	var prev uint64
	seen := false
	for i := range erfChecks {
		if err := r.fill(off - r.pos + erfHeaderLen); err != nil {
			// A clean end after at least one record is fine; otherwise
			// the first records must all have been complete.
			return i >= erfMinChecks || (i > 0 && r.end == off && err == errShort)
		}
		h := r.buf[off : off+erfHeaderLen]
		rlen := int(binary.BigEndian.Uint16(h[10:]))
		if rlen < erfHeaderLen || !erfKnownType(h[8]) {
			return false
		}
		if err := r.fill(off - r.pos + rlen); err != nil {
			return i >= erfMinChecks
		}
		rec := r.buf[off : off+rlen]
		if h[8]&0x7f != erfTypePad {
			if rlen == erfHeaderLen || erfHeaderLength(rec) < 0 {
				return false
			}
			ts := binary.LittleEndian.Uint64(h)
			if !seen && ts>>32 == 0 && h[8]&0x7f != erfTypeMeta {
				return false // no ERF capture is from January 1970
			}
			if seen && ts < prev && (prev-ts)>>32 > 1 {
				return false
			}
			if seen && ts > prev && (ts-prev)>>32 > 365*24*3600 {
				return false
			}
			prev, seen = ts, true
		}
		off += rlen
		if i+1 >= erfMinChecks && off-r.pos > erfSniffBytes {
			return true // enough seen
		}
	}
	return true
}

func (r *Reader) initERF() error {
	r.format, r.fname = formatERF, "erf"
	return nil
}

func (r *Reader) nextERF(info *PacketInfo) ([]byte, error) {
	for {
		if r.end-r.pos < erfHeaderLen {
			if err := r.fill(erfHeaderLen); err != nil {
				if err == errShort && r.atEOF() {
					return r.setEOF()
				}
				return r.failFill(err, "the 16-byte ERF record header", erfHeaderLen)
			}
		}
		h := r.buf[r.pos : r.pos+erfHeaderLen]
		rlen := int(binary.BigEndian.Uint16(h[10:]))
		if rlen < erfHeaderLen {
			return r.fail(false, "ERF record length is %d, less than its 16-byte header", rlen)
		}
		if r.end-r.pos < rlen {
			if err := r.fill(rlen); err != nil {
				return r.failFill(err, "the ERF record", rlen)
			}
		}
		rec := r.buf[r.pos : r.pos+rlen : r.pos+rlen]
		hl := erfHeaderLength(rec)
		if hl < 0 {
			return r.fail(false, "ERF record of %d bytes is too short for its extension headers and subheader", rlen)
		}
		if rec[8]&0x7f == erfTypePad {
			r.pos += rlen
			continue
		}
		r.recOff = r.base + int64(r.pos)
		r.pos += rlen
		r.num++
		info.Timestamp = erfTime(binary.LittleEndian.Uint64(rec))
		info.CaptureLength = rlen
		info.Length = int(binary.BigEndian.Uint16(rec[14:])) + hl
		info.LinkType = linkTypeERF
		info.InterfaceIndex = 0
		return rec, nil
	}
}
