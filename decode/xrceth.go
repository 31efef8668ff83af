package decode

import (
	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
)

// XRCETHLen is the length of the XRC Extended Transport Header.
const XRCETHLen = 4

// XRCETH is the XRC Extended Transport Header (IBA Annex A14), first after
// BTH on XRC requests (never on responses).
//
//	+---------------+-----------------------------------------------+
//	| Reserved (8)  |              XRC SRQ (24)                     |
//	+---------------+-----------------------------------------------+
type XRCETH struct {
	layers.BaseLayer
	nextLayer
	Reserved uint8
	XRCSRQ   uint32
}

func (h *XRCETH) LayerType() gopacket.LayerType  { return LayerTypeXRCETH }
func (h *XRCETH) CanDecode() gopacket.LayerClass { return LayerTypeXRCETH }

// DecodeFromBytes decodes an XRCETH at the start of data.
func (h *XRCETH) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	if len(data) < XRCETHLen {
		df.SetTruncated()
		return truncated("xrceth", XRCETHLen, len(data))
	}
	h.Reserved = data[0]
	h.XRCSRQ = get24(data[1:])
	h.Contents, h.Payload = data[:XRCETHLen], data[XRCETHLen:]
	return nil
}

// SerializeTo prepends the XRCETH.
func (h *XRCETH) SerializeTo(b gopacket.SerializeBuffer, _ gopacket.SerializeOptions) error {
	d, err := b.PrependBytes(XRCETHLen)
	if err != nil {
		return err
	}
	d[0] = h.Reserved
	put24(d[1:], h.XRCSRQ)
	return nil
}

// registerXRCETHFields registers the XRCETH fields (rocetap.*: Wireshark 4.0 has none).
func registerXRCETHFields(ib *Field) {
	xrceth := hdrField("rocetap.xrceth", "XRC Extended Transport Header", FTBytes, HdrXRCETH, func(p *Packet) []byte { return p.XRCETH.Contents })
	xrceth.Parent = ib
	uintField(xrceth, "rocetap.xrceth.xrcsrq", "XRC Shared Receive Queue", FTUint24, BaseHex, 0, 1, 3, func(p *Packet) uint64 { return uint64(p.XRCETH.XRCSRQ) })
}
