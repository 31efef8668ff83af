package decode

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// RoCEv2Port is the IANA UDP destination port of RoCEv2.
const RoCEv2Port = 4791

// Decoder decodes frames into Packets. Its zero value is not ready; use
// NewDecoder. A Decoder holds only configuration and may be shared by
// goroutines.
type Decoder struct {
	ports [8]uint16 // UDP destination ports that carry RoCEv2
	nport int
	// SkipCRCs leaves ICRC and VCRC unchecked (status CRCAbsent) for
	// callers that show no field depending on them, like tshark -T fields
	// builds only the fields asked for. The trailers are still decoded.
	SkipCRCs bool
	// Headers, when set, is called with each packet whose transport
	// headers are decoded, before its ICRC is computed, the longest step
	// of decoding: a consumer that keeps state per connection can start
	// loading the packet's from memory then (flow.Tracker.Prefetch), to
	// arrive while the ICRC is computed. A Decoder with Headers set is
	// no longer safe to share between goroutines unless Headers is.
	Headers func(p *Packet)
}

// NewDecoder returns a Decoder that treats UDP destination port 4791 and
// any extra ports as RoCEv2 (like tshark's -d udp.port==N,infiniband).
func NewDecoder(extraPorts ...uint16) *Decoder {
	d := &Decoder{}
	d.ports[0] = RoCEv2Port
	d.nport = 1
	for _, p := range extraPorts {
		if d.nport < len(d.ports) && p != RoCEv2Port {
			d.ports[d.nport] = p
			d.nport++
		}
	}
	return d
}

var defaultDecoder = NewDecoder()

// Decode decodes data with the default Decoder (UDP port 4791).
func Decode(p *Packet, data []byte, linkType LinkType) { defaultDecoder.Decode(p, data, linkType) }

func (d *Decoder) isRoCEPort(port uint16) bool {
	for i := 0; i < d.nport; i++ {
		if d.ports[i] == port {
			return true
		}
	}
	return false
}

// Decode decodes data, captured with the given link type, into p. It keeps
// p.Frame except Data, CapLen and LinkType, and never allocates for a frame
// that decodes cleanly. Problems are recorded in p.Flags and p.Err.
func (d *Decoder) Decode(p *Packet, data []byte, linkType LinkType) {
	p.Has, p.Flags, p.Encap, p.NumVLAN, p.Err = 0, 0, EncapNone, 0, nil
	p.ICRCStatus, p.VCRCStatus = CRCAbsent, CRCAbsent
	p.Payload, p.Pad, p.IB, p.ibPacket = nil, nil, nil, nil
	p.Data = nil
	p.L3Off, p.L4Off = 0, 0
	p.SA.Valid = false // its RecordData must not answer for the last SA MAD
	if p.Analysis.Tracked {
		p.Analysis.Reset()
	}
	p.Frame.Data, p.Frame.CapLen, p.Frame.LinkType = data, len(data), linkType
	if p.Frame.Len < len(data) {
		p.Frame.Len = len(data)
	}
	// snapped: the capture holds fewer bytes than the wire carried.
	snapped := p.Frame.Len > len(data)
	switch linkType {
	case LinkTypeEthernet:
		d.ethernet(p, data, snapped)
	case LinkTypeRaw:
		d.rawIP(p, data, snapped)
	case LinkTypeIPv4, LinkTypeIPv6:
		d.rawIP(p, data, snapped)
	case LinkTypeLinuxSLL:
		d.sll(p, data, snapped)
	case LinkTypeLinuxSLL2:
		d.sll2(p, data, snapped)
	case LinkTypeInfiniBand:
		d.lrh(p, data, snapped)
	case LinkTypeERF:
		d.erf(p, data, snapped)
	case LinkTypeIPoIB:
		d.ipoibLink(p, data, snapped)
	default:
		p.Flags |= FlagUnsupportedLink
		p.Err = errUnsupportedLink
	}
}

var (
	errUnsupportedLink = errors.New("link type not supported: rocetap decodes Ethernet (1), raw IP (101, 228, 229), Linux SLL (113), SLL2 (276), InfiniBand (247), IPoIB (242) and ERF (197)")
	errFragment        = errors.New("ip: fragment, transport not decoded")
	errBadPad          = errors.New("bth: pad count larger than the payload")
	errSnapped         = errors.New("capture holds less than the packet (snapshot length): payload and ICRC cut")
)

func (p *Packet) truncatedAt(hdr string, need, have int) {
	p.Flags |= FlagTruncated
	if p.Err == nil {
		p.Err = truncated(hdr, need, have)
	}
}

func (p *Packet) malformed(err error) {
	p.Flags |= FlagMalformed
	if p.Err == nil {
		p.Err = err
	}
}

func (d *Decoder) ethernet(p *Packet, data []byte, snapped bool) {
	if len(data) < 14 {
		p.truncatedAt("eth", 14, len(data))
		return
	}
	copy(p.Eth.Dst[:], data[0:6])
	copy(p.Eth.Src[:], data[6:12])
	et := binary.BigEndian.Uint16(data[12:])
	p.Eth.EtherType = et
	p.Has |= HdrEth
	d.etherType(p, et, data[14:], snapped)
}

// etherType dispatches on an EtherType, unwrapping VLAN tags.
func (d *Decoder) etherType(p *Packet, et uint16, data []byte, snapped bool) {
	for et == 0x8100 || et == 0x88A8 || et == 0x9100 {
		if len(data) < 4 {
			p.truncatedAt("vlan", 4, len(data))
			return
		}
		tci := binary.BigEndian.Uint16(data)
		next := binary.BigEndian.Uint16(data[2:])
		if p.NumVLAN < MaxVLAN {
			p.VLAN[p.NumVLAN] = VLANTag{TPID: et, Priority: uint8(tci >> 13), DEI: tci&0x1000 != 0, ID: tci & 0x0FFF, Type: next}
			p.NumVLAN++
		}
		p.Has |= HdrVLAN
		et, data = next, data[4:]
	}
	p.Eth.Type = et
	switch et {
	case 0x0800:
		d.ipv4(p, data, snapped)
	case 0x86DD:
		d.ipv6(p, data, snapped)
	case 0x8915:
		p.Encap = EncapRoCEv1
		d.grhFirst(p, data, snapped)
	case 0x8808:
		d.macControl(p, data)
	case etherTypeARP, etherTypeRARP:
		d.arp(p, data)
	case etherTypeLLDP:
		d.lldp(p, data)
	}
}

func (d *Decoder) rawIP(p *Packet, data []byte, snapped bool) {
	if len(data) < 1 {
		p.truncatedAt("ip", 1, 0)
		return
	}
	switch data[0] >> 4 {
	case 4:
		d.ipv4(p, data, snapped)
	case 6:
		d.ipv6(p, data, snapped)
	default:
		p.malformed(fmt.Errorf("raw ip: version %d is neither 4 nor 6: %w", data[0]>>4, ErrMalformed))
	}
}

func (d *Decoder) sll(p *Packet, data []byte, snapped bool) {
	if len(data) < 16 {
		p.truncatedAt("sll", 16, len(data))
		return
	}
	s := &p.SLL
	s.PacketType = binary.BigEndian.Uint16(data)
	s.HAType = binary.BigEndian.Uint16(data[2:])
	s.HALen = binary.BigEndian.Uint16(data[4:])
	copy(s.Addr[:], data[6:14])
	s.Protocol = binary.BigEndian.Uint16(data[14:])
	s.IfIndex = 0
	p.Has |= HdrSLL
	d.etherType(p, s.Protocol, data[16:], snapped)
}

func (d *Decoder) sll2(p *Packet, data []byte, snapped bool) {
	if len(data) < 20 {
		p.truncatedAt("sll2", 20, len(data))
		return
	}
	s := &p.SLL
	s.Protocol = binary.BigEndian.Uint16(data)
	s.IfIndex = binary.BigEndian.Uint32(data[4:])
	s.HAType = binary.BigEndian.Uint16(data[8:])
	s.PacketType = uint16(data[10])
	s.HALen = uint16(data[11])
	copy(s.Addr[:], data[12:20])
	p.Has |= HdrSLL2
	d.etherType(p, s.Protocol, data[20:], snapped)
}

// ERF record types rocetap unwraps.
const (
	ERFTypeEth           = 2
	ERFTypeColorEth      = 10
	ERFTypeDSMColorEth   = 16
	ERFTypeColorHashEth  = 20
	ERFTypeInfiniBand    = 21
	ERFTypeIPv4          = 22
	ERFTypeIPv6          = 23
	ERFTypeInfiniBandLnk = 25
)

func (d *Decoder) erf(p *Packet, data []byte, snapped bool) {
	if len(data) < 16 {
		p.truncatedAt("erf", 16, len(data))
		return
	}
	e := &p.ERF
	e.Timestamp = binary.LittleEndian.Uint64(data)
	e.Type, e.Ext = data[8]&0x7F, data[8]&0x80 != 0
	e.Flags = data[9]
	e.RLen = binary.BigEndian.Uint16(data[10:])
	e.LCtr = binary.BigEndian.Uint16(data[12:])
	e.WLen = binary.BigEndian.Uint16(data[14:])
	p.Has |= HdrERF
	rest := data[16:]
	if e.Ext {
		// Extension headers: 8 bytes each, bit 7 of the first byte says
		// another follows.
		for {
			if len(rest) < 8 {
				p.truncatedAt("erf extension header", 8, len(rest))
				return
			}
			more := rest[0]&0x80 != 0
			rest = rest[8:]
			if !more {
				break
			}
		}
	}
	// The record may be padded beyond the wire length: trust wlen. Like
	// Wireshark, the frame is what the record carries: its length on the
	// wire is wlen, its captured length what follows the ERF headers.
	wire := int(e.WLen)
	p.Frame.Len = wire
	p.Frame.CapLen = len(rest)
	if e.Type == ERFTypeEth || e.Type == ERFTypeColorEth || e.Type == ERFTypeDSMColorEth || e.Type == ERFTypeColorHashEth {
		p.Frame.CapLen = max(0, len(rest)-2)
	}
	switch e.Type {
	case ERFTypeEth, ERFTypeColorEth, ERFTypeDSMColorEth, ERFTypeColorHashEth:
		if len(rest) < 2 {
			p.truncatedAt("erf eth pad", 2, len(rest))
			return
		}
		rest = rest[2:]
		// wlen counts the 4-byte FCS, which the record may or may not hold.
		if wire > len(rest)+4 {
			snapped = true
		} else if wire > 0 && wire <= len(rest) {
			rest = rest[:wire]
		}
		d.ethernet(p, rest, snapped)
	case ERFTypeInfiniBand, ERFTypeInfiniBandLnk:
		if wire > 0 && wire <= len(rest) {
			rest = rest[:wire]
		} else if wire > len(rest) {
			snapped = true
		}
		d.lrh(p, rest, snapped)
	case ERFTypeIPv4, ERFTypeIPv6:
		if wire > 0 && wire <= len(rest) {
			rest = rest[:wire]
		} else if wire > len(rest) {
			snapped = true
		}
		d.rawIP(p, rest, snapped)
	default:
		p.Flags |= FlagUnsupportedLink
		p.Err = fmt.Errorf("erf: record type %d not supported (Ethernet and InfiniBand records are)", e.Type)
	}
}

func (d *Decoder) macControl(p *Packet, data []byte) {
	if len(data) < 2 {
		p.truncatedAt("mac control", 2, len(data))
		return
	}
	c := &p.PFC
	c.Opcode = binary.BigEndian.Uint16(data)
	switch c.Opcode {
	case 0x0001: // PAUSE
		if len(data) < 4 {
			p.truncatedAt("pause", 4, len(data))
			return
		}
		c.ClassEnable = 0
		c.Quanta = [8]uint16{binary.BigEndian.Uint16(data[2:])}
		p.Has |= HdrPause
	case 0x0101: // PFC
		if len(data) < 20 {
			p.truncatedAt("pfc", 20, len(data))
			return
		}
		c.ClassEnable = binary.BigEndian.Uint16(data[2:])
		for i := range c.Quanta {
			c.Quanta[i] = binary.BigEndian.Uint16(data[4+2*i:])
		}
		p.Has |= HdrPFC
	}
}

func (d *Decoder) ipv4(p *Packet, data []byte, snapped bool) {
	if len(data) < 20 {
		p.truncatedAt("ipv4", 20, len(data))
		return
	}
	h := &p.IPv4
	p.L3Off = p.Offset(data)
	h.Version, h.IHL = data[0]>>4, data[0]&0x0F
	h.TOS = data[1]
	h.TotalLen = binary.BigEndian.Uint16(data[2:])
	h.ID = binary.BigEndian.Uint16(data[4:])
	ff := binary.BigEndian.Uint16(data[6:])
	h.Flags, h.FragOff = uint8(ff>>13), ff&0x1FFF
	h.TTL, h.Protocol = data[8], data[9]
	h.Checksum = binary.BigEndian.Uint16(data[10:])
	copy(h.Src[:], data[12:16])
	copy(h.Dst[:], data[16:20])
	p.Has |= HdrIPv4
	hl := int(h.IHL) * 4
	if hl < 20 || int(h.TotalLen) < hl {
		p.malformed(fmt.Errorf("ipv4: header length %d, total length %d: %w", hl, h.TotalLen, ErrMalformed))
		return
	}
	if len(data) < hl {
		p.truncatedAt("ipv4 options", hl, len(data))
		return
	}
	end := int(h.TotalLen)
	wasSnapped := snapped
	if end > len(data) {
		snapped = true
		end = len(data)
	}
	if h.Protocol != 17 {
		if h.FragOff == 0 && h.Flags&1 == 0 {
			d.ipProto(p, h.Protocol, data[hl:end], end < int(h.TotalLen), wasSnapped)
		}
		return
	}
	if h.FragOff != 0 || h.Flags&1 != 0 {
		p.Flags |= FlagFragment
		p.Err = errFragment
		return
	}
	d.udp(p, data, hl, end, snapped)
}

func (d *Decoder) ipv6(p *Packet, data []byte, snapped bool) {
	if len(data) < 40 {
		p.truncatedAt("ipv6", 40, len(data))
		return
	}
	h := &p.IPv6
	p.L3Off = p.Offset(data)
	w := binary.BigEndian.Uint32(data)
	h.Version, h.TrafficClass, h.FlowLabel = uint8(w>>28), uint8(w>>20), w&0xFFFFF
	h.PayloadLen = binary.BigEndian.Uint16(data[4:])
	h.NextHeader, h.HopLimit = data[6], data[7]
	copy(h.Src[:], data[8:24])
	copy(h.Dst[:], data[24:40])
	p.Has |= HdrIPv6
	end := 40 + int(h.PayloadLen)
	wasSnapped, short := snapped, end > len(data)
	if end > len(data) {
		snapped = true
		end = len(data)
	}
	nh, off := h.NextHeader, 40
	for {
		switch nh {
		case 17:
			d.udp(p, data, off, end, snapped)
			return
		case 0, 43, 60: // hop-by-hop, routing, destination options
			if end-off < 8 {
				p.truncatedAt("ipv6 extension header", 8, end-off)
				return
			}
			nh, off = data[off], off+8*(int(data[off+1])+1)
			if off > end {
				p.truncatedAt("ipv6 extension header", off, end)
				return
			}
		case 44:
			p.Flags |= FlagFragment
			p.Err = errFragment
			return
		default:
			d.ipProto(p, nh, data[off:end], short, wasSnapped)
			return
		}
	}
}

// udp decodes the UDP header at ip[off:]; end is where the IP packet ends
// within the captured bytes.
func (d *Decoder) udp(p *Packet, ip []byte, off, end int, snapped bool) {
	if end-off < 8 {
		p.truncatedAt("udp", 8, end-off)
		return
	}
	u := &p.UDP
	b := ip[off:]
	p.L4Off = p.Offset(b)
	u.SrcPort = binary.BigEndian.Uint16(b)
	u.DstPort = binary.BigEndian.Uint16(b[2:])
	u.Length = binary.BigEndian.Uint16(b[4:])
	u.Checksum = binary.BigEndian.Uint16(b[6:])
	p.Has |= HdrUDP
	if p.Has&HdrBTH != 0 || !d.isRoCEPort(u.DstPort) {
		// Not RoCE (and never RoCE inside an InfiniBand packet): a UDP
		// datagram IPoIB carries shows its payload as data, as tshark.
		if p.Has&HdrIPoIB != 0 && u.Length >= 8 {
			p.setData(ip[off+8 : max(off+8, min(off+int(u.Length), end))])
			if off+int(u.Length) > end {
				p.Flags |= FlagTruncated
				if p.Err == nil {
					p.Err = errSnapped
				}
			}
		}
		return
	}
	if int(u.Length) < 8 {
		p.malformed(fmt.Errorf("udp: length %d shorter than its header: %w", u.Length, ErrMalformed))
		return
	}
	uend := off + int(u.Length)
	if uend > end {
		if !snapped {
			p.malformed(fmt.Errorf("udp: length %d runs past the IP packet: %w", u.Length, ErrMalformed))
		}
		snapped = true
		uend = end
	}
	p.Encap = EncapRoCEv2
	d.transport(p, ip[off+8:uend], snapped, ip[:uend], nil, false)
}

// grhFirst decodes a RoCEv1 frame: GRH, then the IBA transport.
func (d *Decoder) grhFirst(p *Packet, data []byte, snapped bool) {
	if err := p.GRH.DecodeFromBytes(data, noFeedback); err != nil {
		p.truncatedAt("grh", GRHLen, len(data))
		return
	}
	p.Has |= HdrGRH
	end := GRHLen + int(p.GRH.PayLen)
	if end > len(data) {
		snapped = true
		end = len(data)
	}
	p.ibPacket = data[:end]
	if p.GRH.NextHeader != GRHNextHeaderIBA {
		return
	}
	d.transport(p, data[GRHLen:end], snapped, nil, data[:end], false)
}

// lrh decodes a native InfiniBand packet: LRH, optional GRH, transport, VCRC.
func (d *Decoder) lrh(p *Packet, data []byte, snapped bool) {
	if err := p.LRH.DecodeFromBytes(data, noFeedback); err != nil {
		p.truncatedAt("lrh", LRHLen, len(data))
		return
	}
	p.Has |= HdrLRH
	p.Encap = EncapIB
	end := int(p.LRH.PktLen)*4 + VCRCLen
	if end < LRHLen+VCRCLen {
		p.malformed(fmt.Errorf("lrh: packet length %d words is shorter than the LRH: %w", p.LRH.PktLen, ErrMalformed))
		end = len(data)
	}
	if end > len(data) {
		snapped = true
		end = len(data)
	}
	frame := data[:end]
	p.ibPacket = frame
	body := frame[LRHLen:]
	if !snapped && d.SkipCRCs {
		if len(body) >= VCRCLen {
			_ = p.VCRC.DecodeFromBytes(body[len(body)-VCRCLen:], noFeedback)
			p.Has |= HdrVCRC
			body = body[:len(body)-VCRCLen]
		}
	} else if !snapped {
		if len(body) < VCRCLen {
			p.truncatedAt("vcrc", VCRCLen, len(body))
			return
		}
		_ = p.VCRC.DecodeFromBytes(body[len(body)-VCRCLen:], noFeedback)
		p.Has |= HdrVCRC
		body = body[:len(body)-VCRCLen]
		comp := ComputeVCRC(frame[:len(frame)-VCRCLen])
		p.VCRCComputed = comp>>8 | comp<<8
		if p.VCRCComputed == p.VCRC.CRC {
			p.VCRCStatus = CRCGood
		} else {
			p.VCRCStatus = CRCBad
			p.Flags |= FlagVCRCBad
		}
	} else {
		p.VCRCStatus = CRCUnverifiable
	}
	switch p.LRH.LNH {
	case LNHGlobal:
		if err := p.GRH.DecodeFromBytes(body, noFeedback); err != nil {
			p.truncatedAt("grh", GRHLen, len(body))
			return
		}
		p.Has |= HdrGRH
		if p.GRH.NextHeader != GRHNextHeaderIBA {
			return
		}
		d.transport(p, body[GRHLen:], snapped, nil, body, true)
	case LNHLocal:
		d.transport(p, body, snapped, nil, body, true)
	}
}

// transport decodes BTH, the extended headers, payload, pad and ICRC. tr
// runs from BTH to the end of the ICRC (or the end of the captured bytes
// when snapped). For the ICRC, RoCEv2 passes ip (IP header to ICRC end);
// RoCEv1 and native IB pass grhOrBTH (GRH or BTH to ICRC end), with lrh set
// for native IB.
func (d *Decoder) transport(p *Packet, tr []byte, snapped bool, ip, grhOrBTH []byte, lrh bool) {
	p.IB = tr
	if p.ibPacket == nil {
		p.ibPacket = tr // RoCEv2: the InfiniBand packet starts at the BTH
	}
	if err := p.BTH.DecodeFromBytes(tr, noFeedback); err != nil {
		p.truncatedAt("bth", BTHLen, len(tr))
		p.ICRCStatus = CRCUnverifiable
		p.Flags |= FlagICRCUnverifiable
		return
	}
	p.Has |= HdrBTH
	body := tr[BTHLen:]
	if !snapped {
		if len(body) < ICRCLen {
			p.truncatedAt("icrc", ICRCLen, len(body))
			snapped = true
		} else {
			_ = p.ICRC.DecodeFromBytes(body[len(body)-ICRCLen:], noFeedback)
			p.Has |= HdrICRC
			body = body[:len(body)-ICRCLen]
		}
	}
	op := p.BTH.Opcode
	if !op.Known() {
		p.Flags |= FlagUnknownOpcode
		if p.Err == nil {
			p.Err = fmt.Errorf("bth: opcode 0x%02x is not defined by the IBTA; decoded as far as the BTH", uint8(op))
		}
	}
	for _, h := range op.ExtHeaders() {
		row := extRow(h)
		err := row.decode(p, body)
		if err != nil {
			// Cut by the capture, or shorter than its opcode's headers
			// on the wire: a whole packet is malformed, not truncated
			// (and its ICRC is checked).
			if snapped {
				p.Flags |= FlagTruncated
			} else {
				p.Flags |= FlagMalformed
			}
			if p.Err == nil {
				p.Err = err
			}
			body = nil // the partial header is not payload
			break
		}
		p.Has |= h
		body = body[row.len:]
	}
	// Pad: only when the ICRC is present do we know where the payload ends.
	pad := int(p.BTH.PadCount)
	if p.Has&HdrICRC != 0 {
		if pad > len(body) {
			p.Flags |= FlagBadPad
			if p.Err == nil {
				p.Err = errBadPad
			}
			pad = len(body)
		}
		p.Payload, p.Pad = body[:len(body)-pad], body[len(body)-pad:]
	} else {
		p.Payload = body
	}
	if len(p.Payload) > 0 {
		p.Has |= HdrPayload
	}
	if snapped {
		// The capture holds less than the packet: what is missing is
		// payload or ICRC, so the packet is truncated, not malformed.
		p.Flags |= FlagTruncated
		if p.Err == nil {
			p.Err = errSnapped
		}
	}
	srcQP := uint32(0xFFFFFF)
	if p.Has&HdrDETH != 0 {
		srcQP = p.DETH.SrcQP
	}
	if body != nil && carriesMAD(op, p.BTH.DestQP, srcQP) {
		p.decodeMAD(p.Payload)
	} else if body != nil && isIPoIB(op, p.Payload, snapped) {
		if p.Has&(HdrIPv4|HdrIPv6) == 0 {
			d.ipoibPayload(p, p.Payload, snapped)
		} else {
			d.ipoibInner(p, p.Payload, snapped) // RoCEv2: a second IP header
		}
	}
	if d.Headers != nil {
		d.Headers(p)
	}
	// ICRC.
	if d.SkipCRCs && p.Has&HdrICRC != 0 {
		return
	}
	if p.Has&HdrICRC == 0 {
		p.ICRCStatus = CRCUnverifiable
		p.Flags |= FlagICRCUnverifiable
		return
	}
	var crc uint32
	var ok bool
	if ip != nil {
		crc, ok = icrcRoCEv2(ip[:len(ip)-ICRCLen], &p.scratch)
	} else {
		var l []byte
		if lrh {
			l = p.LRH.Contents
		}
		crc, ok = icrcGRH(&p.scratch, l, p.Has&HdrGRH != 0, grhOrBTH[:len(grhOrBTH)-ICRCLen])
	}
	if !ok {
		p.ICRCStatus = CRCUnverifiable
		p.Flags |= FlagICRCUnverifiable
		return
	}
	p.ICRCComputed = swap32(crc)
	if p.ICRCComputed == p.ICRC.CRC {
		p.ICRCStatus = CRCGood
	} else {
		p.ICRCStatus = CRCBad
		p.Flags |= FlagICRCBad
	}
}
