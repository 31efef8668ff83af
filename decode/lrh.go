package decode

import (
	"encoding/binary"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
)

// LRHLen is the length of the Local Route Header.
const LRHLen = 8

// Link Next Header values (LRH.LNH).
const (
	LNHRaw    = 0 // raw packet
	LNHIP     = 1 // IP (non-IBA transport)
	LNHLocal  = 2 // IBA local: BTH follows
	LNHGlobal = 3 // IBA global: GRH follows
)

// LRH is the InfiniBand Local Route Header (IBA 7.7), first on every native
// InfiniBand packet.
//
//	+-------+-------+-------+---+---+-------------------------------+
//	|  VL   | LVer  |  SL   |Rsv|LNH|      Destination LID (16)     |
//	+-------+-------+-------+---+---+-------------------------------+
//	| Rsv5    | Packet Length (11)  |        Source LID (16)        |
//	+---------+---------------------+-------------------------------+
type LRH struct {
	layers.BaseLayer
	VL        uint8
	LVer      uint8
	SL        uint8
	Reserved2 uint8
	LNH       uint8
	DLID      uint16
	Reserved5 uint8
	PktLen    uint16 // in 4-byte words, LRH to VCRC exclusive
	SLID      uint16
}

func (h *LRH) LayerType() gopacket.LayerType  { return LayerTypeLRH }
func (h *LRH) CanDecode() gopacket.LayerClass { return LayerTypeLRH }

// NextLayerType returns GRH, BTH or payload according to LNH.
func (h *LRH) NextLayerType() gopacket.LayerType {
	switch h.LNH {
	case LNHGlobal:
		return LayerTypeGRH
	case LNHLocal:
		return LayerTypeBTH
	}
	return gopacket.LayerTypePayload
}

// DecodeFromBytes decodes an LRH at the start of data.
func (h *LRH) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	if len(data) < LRHLen {
		df.SetTruncated()
		return truncated("lrh", LRHLen, len(data))
	}
	h.VL, h.LVer = data[0]>>4, data[0]&0x0F
	h.SL, h.Reserved2, h.LNH = data[1]>>4, data[1]>>2&3, data[1]&3
	h.DLID = binary.BigEndian.Uint16(data[2:])
	w := binary.BigEndian.Uint16(data[4:])
	h.Reserved5, h.PktLen = uint8(w>>11), w&0x7FF
	h.SLID = binary.BigEndian.Uint16(data[6:])
	h.Contents, h.Payload = data[:LRHLen], data[LRHLen:]
	return nil
}

// SerializeTo prepends the LRH. With opts.FixLengths, PktLen is set from
// the bytes that follow plus the 2-byte VCRC.
func (h *LRH) SerializeTo(b gopacket.SerializeBuffer, opts gopacket.SerializeOptions) error {
	rest := len(b.Bytes())
	d, err := b.PrependBytes(LRHLen)
	if err != nil {
		return err
	}
	if opts.FixLengths {
		// PktLen counts LRH..ICRC; the VCRC (2 bytes, already appended) is excluded.
		h.PktLen = uint16((LRHLen + rest - VCRCLen) / 4)
	}
	d[0] = h.VL<<4 | h.LVer&0x0F
	d[1] = h.SL<<4 | (h.Reserved2&3)<<2 | h.LNH&3
	binary.BigEndian.PutUint16(d[2:], h.DLID)
	binary.BigEndian.PutUint16(d[4:], uint16(h.Reserved5)<<11|h.PktLen&0x7FF)
	binary.BigEndian.PutUint16(d[6:], h.SLID)
	return nil
}

// registerLRHFields registers the LRH fields (Wireshark 4.0 names, types and bases).
func registerLRHFields(ib *Field) {
	lrh := hdrField("infiniband.lrh", "Local Route Header", FTBytes, HdrLRH, func(p *Packet) []byte { return p.LRH.Contents })
	lrh.Parent = ib
	uintField(lrh, "infiniband.lrh.vl", "Virtual Lane", FTUint8, BaseHex, 0xf0, 0, 1, func(p *Packet) uint64 { return uint64(p.LRH.VL) })
	uintField(lrh, "infiniband.lrh.lver", "Link Version", FTUint8, BaseDec, 0x0f, 0, 1, func(p *Packet) uint64 { return uint64(p.LRH.LVer) })
	uintField(lrh, "infiniband.lrh.sl", "Service Level", FTUint8, BaseDec, 0xf0, 1, 1, func(p *Packet) uint64 { return uint64(p.LRH.SL) })
	uintField(lrh, "infiniband.lrh.reserved2", "Reserved (2 bits)", FTUint8, BaseDec, 0x0c, 1, 1, func(p *Packet) uint64 { return uint64(p.LRH.Reserved2) })
	uintField(lrh, "infiniband.lrh.lnh", "Link Next Header", FTUint8, BaseHex, 0x03, 1, 1, func(p *Packet) uint64 { return uint64(p.LRH.LNH) })
	uintField(lrh, "infiniband.lrh.dlid", "Destination Local ID", FTUint16, BaseDec, 0, 2, 2, func(p *Packet) uint64 { return uint64(p.LRH.DLID) })
	uintField(lrh, "infiniband.lrh.reserved5", "Reserved (5 bits)", FTUint16, BaseDec, 0xf800, 4, 2, func(p *Packet) uint64 { return uint64(p.LRH.Reserved5) })
	uintField(lrh, "infiniband.lrh.pktlen", "Packet Length", FTUint16, BaseDec, 0x07ff, 4, 2, func(p *Packet) uint64 { return uint64(p.LRH.PktLen) })
	uintField(lrh, "infiniband.lrh.slid", "Source Local ID", FTUint16, BaseDec, 0, 6, 2, func(p *Packet) uint64 { return uint64(p.LRH.SLID) })
}
