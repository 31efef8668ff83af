package decode

import (
	"encoding/binary"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
)

// GRHLen is the length of the Global Route Header.
const GRHLen = 40

// GRHNextHeaderIBA is the GRH next-header value for an IBA transport header.
const GRHNextHeaderIBA = 0x1B

// GRH is the InfiniBand Global Route Header (IBA 8.3), after the LRH when
// LNH=3 and first on every RoCEv1 frame. Its layout is that of IPv6.
//
//	+-------+---------------+---------------------------------------+
//	|IPVer  | Traffic Class |           Flow Label (20)             |
//	+-------+---------------+---------------+-----------------------+
//	|      Payload Length (16)      | NxtHdr (8)    | HopLmt (8)    |
//	+-------------------------------+---------------+---------------+
//	|                    Source GID (128)                           |
//	|                    Destination GID (128)                      |
//	+---------------------------------------------------------------+
type GRH struct {
	layers.BaseLayer
	IPVer        uint8
	TrafficClass uint8
	FlowLabel    uint32
	PayLen       uint16
	NextHeader   uint8
	HopLimit     uint8
	SGID         [16]byte
	DGID         [16]byte
}

func (h *GRH) LayerType() gopacket.LayerType  { return LayerTypeGRH }
func (h *GRH) CanDecode() gopacket.LayerClass { return LayerTypeGRH }

// NextLayerType returns BTH when NextHeader is 0x1B.
func (h *GRH) NextLayerType() gopacket.LayerType {
	if h.NextHeader == GRHNextHeaderIBA {
		return LayerTypeBTH
	}
	return gopacket.LayerTypePayload
}

// DecodeFromBytes decodes a GRH at the start of data.
func (h *GRH) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	if len(data) < GRHLen {
		df.SetTruncated()
		return truncated("grh", GRHLen, len(data))
	}
	w := binary.BigEndian.Uint32(data)
	h.IPVer, h.TrafficClass, h.FlowLabel = uint8(w>>28), uint8(w>>20), w&0xFFFFF
	h.PayLen = binary.BigEndian.Uint16(data[4:])
	h.NextHeader, h.HopLimit = data[6], data[7]
	copy(h.SGID[:], data[8:24])
	copy(h.DGID[:], data[24:40])
	h.Contents, h.Payload = data[:GRHLen], data[GRHLen:]
	return nil
}

// SerializeTo prepends the GRH. With opts.FixLengths, PayLen is set to the
// length of what follows.
func (h *GRH) SerializeTo(b gopacket.SerializeBuffer, opts gopacket.SerializeOptions) error {
	rest := len(b.Bytes())
	d, err := b.PrependBytes(GRHLen)
	if err != nil {
		return err
	}
	if opts.FixLengths {
		h.PayLen = uint16(rest)
	}
	binary.BigEndian.PutUint32(d, uint32(h.IPVer)<<28|uint32(h.TrafficClass)<<20|h.FlowLabel&0xFFFFF)
	binary.BigEndian.PutUint16(d[4:], h.PayLen)
	d[6], d[7] = h.NextHeader, h.HopLimit
	copy(d[8:], h.SGID[:])
	copy(d[24:], h.DGID[:])
	return nil
}

// registerGRHFields registers the GRH fields (Wireshark 4.0 names, types and bases).
func registerGRHFields(ib *Field) {
	grh := hdrField("infiniband.grh", "Global Route Header", FTBytes, HdrGRH, func(p *Packet) []byte { return p.GRH.Contents })
	grh.Parent = ib
	uintField(grh, "infiniband.grh.ipver", "IP Version", FTUint8, BaseDec, 0xf0, 0, 1, func(p *Packet) uint64 { return uint64(p.GRH.IPVer) })
	uintField(grh, "infiniband.grh.tclass", "Traffic Class", FTUint16, BaseDec, 0x0ff0, 0, 2, func(p *Packet) uint64 { return uint64(p.GRH.TrafficClass) })
	uintField(grh, "infiniband.grh.flowlabel", "Flow Label", FTUint32, BaseDec, 0xfffff, 0, 4, func(p *Packet) uint64 { return uint64(p.GRH.FlowLabel) })
	uintField(grh, "infiniband.grh.paylen", "Payload Length", FTUint16, BaseDec, 0, 4, 2, func(p *Packet) uint64 { return uint64(p.GRH.PayLen) })
	uintField(grh, "infiniband.grh.nxthdr", "Next Header", FTUint8, BaseDec, 0, 6, 1, func(p *Packet) uint64 { return uint64(p.GRH.NextHeader) })
	uintField(grh, "infiniband.grh.hoplmt", "Hop Limit", FTUint8, BaseDec, 0, 7, 1, func(p *Packet) uint64 { return uint64(p.GRH.HopLimit) })
	bytesField(grh, "infiniband.grh.sgid", "Source GID", FTIPv6, 8, 16, func(p *Packet) []byte { return p.GRH.SGID[:] })
	bytesField(grh, "infiniband.grh.dgid", "Destination GID", FTIPv6, 24, 16, func(p *Packet) []byte { return p.GRH.DGID[:] })
}
