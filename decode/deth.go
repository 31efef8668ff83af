package decode

import (
	"encoding/binary"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
)

// DETHLen is the length of the Datagram Extended Transport Header.
const DETHLen = 8

// DETH is the Datagram Extended Transport Header (IBA 9.3.2), carried by UD
// and RD requests.
//
//	+---------------------------------------------------------------+
//	|                         Queue Key (32)                        |
//	+---------------+-----------------------------------------------+
//	| Reserved (8)  |              Source QP (24)                   |
//	+---------------+-----------------------------------------------+
type DETH struct {
	layers.BaseLayer
	nextLayer
	QKey     uint32
	Reserved uint8
	SrcQP    uint32
}

func (h *DETH) LayerType() gopacket.LayerType  { return LayerTypeDETH }
func (h *DETH) CanDecode() gopacket.LayerClass { return LayerTypeDETH }

// DecodeFromBytes decodes a DETH at the start of data.
func (h *DETH) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	if len(data) < DETHLen {
		df.SetTruncated()
		return truncated("deth", DETHLen, len(data))
	}
	h.QKey = binary.BigEndian.Uint32(data)
	h.Reserved = data[4]
	h.SrcQP = get24(data[5:])
	h.Contents, h.Payload = data[:DETHLen], data[DETHLen:]
	return nil
}

// SerializeTo prepends the DETH.
func (h *DETH) SerializeTo(b gopacket.SerializeBuffer, _ gopacket.SerializeOptions) error {
	d, err := b.PrependBytes(DETHLen)
	if err != nil {
		return err
	}
	binary.BigEndian.PutUint32(d, h.QKey)
	d[4] = h.Reserved
	put24(d[5:], h.SrcQP)
	return nil
}

// registerDETHFields registers the DETH fields.
func registerDETHFields(ib *Field) {
	deth := hdrField("infiniband.deth", "Datagram Extended Transport Header", FTBytes, HdrDETH, func(p *Packet) []byte { return p.DETH.Contents })
	deth.Parent = ib
	uintField(deth, "infiniband.deth.q_key", "Queue Key", FTUint64, BaseHex, 0, 0, 4, func(p *Packet) uint64 { return uint64(p.DETH.QKey) })
	uintField(deth, "infiniband.deth.srcqp", "Source Queue Pair", FTUint32, BaseHex, 0, 5, 3, func(p *Packet) uint64 { return uint64(p.DETH.SrcQP) })
}
