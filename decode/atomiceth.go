package decode

import (
	"encoding/binary"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
)

// AtomicETHLen is the length of the Atomic Extended Transport Header.
const AtomicETHLen = 28

// AtomicETH is the Atomic Extended Transport Header (IBA 9.3.4), carried by
// Compare Swap and Fetch Add requests.
//
//	+---------------------------------------------------------------+
//	|                     Virtual Address (64)                      |
//	+-------------------------------+-------------------------------+
//	|          Remote Key (32)      |
//	+-------------------------------+-------------------------------+
//	|                  Swap (or Add) Data (64)                      |
//	+---------------------------------------------------------------+
//	|                     Compare Data (64)                         |
//	+---------------------------------------------------------------+
type AtomicETH struct {
	layers.BaseLayer
	nextLayer
	VA          uint64
	RKey        uint32
	SwapAddData uint64
	CompareData uint64
}

func (h *AtomicETH) LayerType() gopacket.LayerType  { return LayerTypeAtomicETH }
func (h *AtomicETH) CanDecode() gopacket.LayerClass { return LayerTypeAtomicETH }

// DecodeFromBytes decodes an AtomicETH at the start of data.
func (h *AtomicETH) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	if len(data) < AtomicETHLen {
		df.SetTruncated()
		return truncated("atomiceth", AtomicETHLen, len(data))
	}
	h.VA = binary.BigEndian.Uint64(data)
	h.RKey = binary.BigEndian.Uint32(data[8:])
	h.SwapAddData = binary.BigEndian.Uint64(data[12:])
	h.CompareData = binary.BigEndian.Uint64(data[20:])
	h.Contents, h.Payload = data[:AtomicETHLen], data[AtomicETHLen:]
	return nil
}

// SerializeTo prepends the AtomicETH.
func (h *AtomicETH) SerializeTo(b gopacket.SerializeBuffer, _ gopacket.SerializeOptions) error {
	d, err := b.PrependBytes(AtomicETHLen)
	if err != nil {
		return err
	}
	binary.BigEndian.PutUint64(d, h.VA)
	binary.BigEndian.PutUint32(d[8:], h.RKey)
	binary.BigEndian.PutUint64(d[12:], h.SwapAddData)
	binary.BigEndian.PutUint64(d[20:], h.CompareData)
	return nil
}

// registerAtomicETHFields registers the AtomicETH fields.
func registerAtomicETHFields(ib *Field) {
	aeth := hdrField("infiniband.atomiceth", "Atomic Extended Transport Header", FTBytes, HdrAtomicETH, func(p *Packet) []byte { return p.AtomicETH.Contents })
	aeth.Parent = ib
	uintField(aeth, "rocetap.atomiceth.va", "Virtual Address", FTUint64, BaseHex, 0, 0, 8, func(p *Packet) uint64 { return p.AtomicETH.VA })
	uintField(aeth, "rocetap.atomiceth.r_key", "Remote Key", FTUint32, BaseHex, 0, 8, 4, func(p *Packet) uint64 { return uint64(p.AtomicETH.RKey) })
	uintField(aeth, "infiniband.atomiceth.swapdt", "Swap (Or Add) Data", FTUint64, BaseDec, 0, 12, 8, func(p *Packet) uint64 { return p.AtomicETH.SwapAddData })
	uintField(aeth, "infiniband.atomiceth.cmpdt", "Compare Data", FTUint64, BaseDec, 0, 20, 8, func(p *Packet) uint64 { return p.AtomicETH.CompareData })
}
