package decode

import (
	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
)

// RDETHLen is the length of the Reliable Datagram Extended Transport Header.
const RDETHLen = 4

// RDETH is the Reliable Datagram Extended Transport Header (IBA 9.3.1),
// first after BTH on every RD packet.
//
//	+---------------+-----------------------------------------------+
//	| Reserved (8)  |            EE-Context (24)                    |
//	+---------------+-----------------------------------------------+
type RDETH struct {
	layers.BaseLayer
	nextLayer
	Reserved uint8
	EECnxt   uint32
}

func (h *RDETH) LayerType() gopacket.LayerType  { return LayerTypeRDETH }
func (h *RDETH) CanDecode() gopacket.LayerClass { return LayerTypeRDETH }

// DecodeFromBytes decodes an RDETH at the start of data.
func (h *RDETH) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	if len(data) < RDETHLen {
		df.SetTruncated()
		return truncated("rdeth", RDETHLen, len(data))
	}
	h.Reserved = data[0]
	h.EECnxt = get24(data[1:])
	h.Contents, h.Payload = data[:RDETHLen], data[RDETHLen:]
	return nil
}

// SerializeTo prepends the RDETH.
func (h *RDETH) SerializeTo(b gopacket.SerializeBuffer, _ gopacket.SerializeOptions) error {
	d, err := b.PrependBytes(RDETHLen)
	if err != nil {
		return err
	}
	d[0] = h.Reserved
	put24(d[1:], h.EECnxt)
	return nil
}

// registerRDETHFields registers the RDETH fields.
func registerRDETHFields(ib *Field) {
	rdeth := hdrField("infiniband.rdeth", "RD Extended Transport Header", FTBytes, HdrRDETH, func(p *Packet) []byte { return p.RDETH.Contents })
	rdeth.Parent = ib
	uintField(rdeth, "infiniband.rdeth.eecnxt", "E2E Context", FTUint24, BaseDec, 0, 1, 3, func(p *Packet) uint64 { return uint64(p.RDETH.EECnxt) })
}
