package decode

import (
	"encoding/binary"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
)

// AtomicAckETHLen is the length of the Atomic Acknowledge Extended Transport Header.
const AtomicAckETHLen = 8

// AtomicAckETH is the Atomic Acknowledge Extended Transport Header (IBA
// 9.3.6): the original remote data an ATOMIC operation found.
//
//	+---------------------------------------------------------------+
//	|                   Original Remote Data (64)                   |
//	+---------------------------------------------------------------+
type AtomicAckETH struct {
	layers.BaseLayer
	nextLayer
	OrigRemData uint64
}

func (h *AtomicAckETH) LayerType() gopacket.LayerType  { return LayerTypeAtomicAckETH }
func (h *AtomicAckETH) CanDecode() gopacket.LayerClass { return LayerTypeAtomicAckETH }

// DecodeFromBytes decodes an AtomicAckETH at the start of data.
func (h *AtomicAckETH) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	if len(data) < AtomicAckETHLen {
		df.SetTruncated()
		return truncated("atomicacketh", AtomicAckETHLen, len(data))
	}
	h.OrigRemData = binary.BigEndian.Uint64(data)
	h.Contents, h.Payload = data[:AtomicAckETHLen], data[AtomicAckETHLen:]
	return nil
}

// SerializeTo prepends the AtomicAckETH.
func (h *AtomicAckETH) SerializeTo(b gopacket.SerializeBuffer, _ gopacket.SerializeOptions) error {
	d, err := b.PrependBytes(AtomicAckETHLen)
	if err != nil {
		return err
	}
	binary.BigEndian.PutUint64(d, h.OrigRemData)
	return nil
}

// registerAtomicAckETHFields registers the AtomicAckETH fields.
func registerAtomicAckETHFields(ib *Field) {
	aack := hdrField("infiniband.atomicacketh", "Atomic ACK Extended Transport Header", FTBytes, HdrAtomicAckETH, func(p *Packet) []byte { return p.AtomicAckETH.Contents })
	aack.Parent = ib
	uintField(aack, "infiniband.atomicacketh.origremdt", "Original Remote Data", FTUint64, BaseDec, 0, 0, 8, func(p *Packet) uint64 { return p.AtomicAckETH.OrigRemData })
}
