package decode

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// Errors FixCRCs returns (test with errors.Is).
var (
	// ErrNoTransport: the frame carries no InfiniBand transport (no BTH).
	ErrNoTransport = errors.New("no InfiniBand transport")
	// ErrNoCRC: the frame has no room for the ICRC, or its ICRC cannot be
	// computed (for example a snapped or cut frame).
	ErrNoCRC = errors.New("ICRC cannot be computed")
)

// FixCRCs computes the ICRC of frame, captured with the given link type, and
// writes it into the frame in place (little-endian, as transmitted). For a
// native InfiniBand packet (link type 247, or an ERF InfiniBand record) it
// then computes and writes the VCRC over the LRH through the new ICRC.
//
// The frame must be complete: FixCRCs returns an error wrapping
// ErrNoTransport when it finds no BTH, and one wrapping ErrTruncated or
// ErrNoCRC when the frame is too short to hold its trailers.
func FixCRCs(frame []byte, linkType LinkType) error {
	var p Packet
	Decode(&p, frame, linkType)
	if p.Flags&FlagUnsupportedLink != 0 {
		return fmt.Errorf("fixcrc: %w", p.Err)
	}
	if p.Has&HdrBTH == 0 {
		if p.Flags&FlagTruncated != 0 {
			return fmt.Errorf("fixcrc: %w", p.Err)
		}
		return fmt.Errorf("fixcrc: %s frame: %w", p.Encap, ErrNoTransport)
	}
	if p.Has&HdrICRC == 0 {
		if p.Err != nil && errors.Is(p.Err, ErrTruncated) {
			return fmt.Errorf("fixcrc: %w", p.Err)
		}
		return fmt.Errorf("fixcrc: no ICRC trailer: %w", ErrNoCRC)
	}
	if p.ICRCStatus != CRCGood && p.ICRCStatus != CRCBad {
		return fmt.Errorf("fixcrc: ICRC status %s: %w", p.ICRCStatus, ErrNoCRC)
	}
	off := p.Offset(p.ICRC.Contents)
	if off < 0 || off+ICRCLen > len(frame) {
		return fmt.Errorf("fixcrc: ICRC outside the frame: %w", ErrNoCRC)
	}
	binary.BigEndian.PutUint32(frame[off:], p.ICRCComputed)
	if p.Encap != EncapIB {
		return nil
	}
	// Native InfiniBand: the VCRC covers LRH..ICRC and follows the ICRC.
	lrh := p.Offset(p.LRH.Contents)
	end := off + ICRCLen
	if lrh < 0 || end+VCRCLen > len(frame) {
		return fmt.Errorf("fixcrc: vcrc: need %d bytes, have %d: %w", end+VCRCLen, len(frame), ErrTruncated)
	}
	binary.LittleEndian.PutUint16(frame[end:], ComputeVCRC(frame[lrh:end]))
	return nil
}
