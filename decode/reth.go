package decode

import (
	"encoding/binary"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
)

// RETHLen is the length of the RDMA Extended Transport Header.
const RETHLen = 16

// RETH is the RDMA Extended Transport Header (IBA 9.3.3), carried by RDMA
// WRITE First/Only, READ Request, FLUSH and ATOMIC WRITE.
//
//	+-------------------------------+-------------------------------+
//	|                     Virtual Address (64)                      |
//	+-------------------------------+-------------------------------+
//	|           Remote Key (32)     |        DMA Length (32)        |
//	+-------------------------------+-------------------------------+
type RETH struct {
	layers.BaseLayer
	nextLayer
	VA     uint64
	RKey   uint32
	DMALen uint32
}

func (h *RETH) LayerType() gopacket.LayerType  { return LayerTypeRETH }
func (h *RETH) CanDecode() gopacket.LayerClass { return LayerTypeRETH }

// DecodeFromBytes decodes a RETH at the start of data.
func (h *RETH) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	if len(data) < RETHLen {
		df.SetTruncated()
		return truncated("reth", RETHLen, len(data))
	}
	h.VA = binary.BigEndian.Uint64(data)
	h.RKey = binary.BigEndian.Uint32(data[8:])
	h.DMALen = binary.BigEndian.Uint32(data[12:])
	h.Contents, h.Payload = data[:RETHLen], data[RETHLen:]
	return nil
}

// SerializeTo prepends the RETH.
func (h *RETH) SerializeTo(b gopacket.SerializeBuffer, _ gopacket.SerializeOptions) error {
	d, err := b.PrependBytes(RETHLen)
	if err != nil {
		return err
	}
	binary.BigEndian.PutUint64(d, h.VA)
	binary.BigEndian.PutUint32(d[8:], h.RKey)
	binary.BigEndian.PutUint32(d[12:], h.DMALen)
	return nil
}

// registerRETHFields registers the RETH fields.
func registerRETHFields(ib *Field) {
	// Wireshark shows the VA and R_Key of an AtomicETH under the RETH
	// names; rocetap does the same and adds rocetap.atomiceth.* names.
	hasVA := func(p *Packet) bool { return p.Has&(HdrRETH|HdrAtomicETH) != 0 }
	reth := hdrField("infiniband.reth", "RDMA Extended Transport Header", FTBytes, HdrRETH, func(p *Packet) []byte { return p.RETH.Contents })
	reth.Parent = ib
	vaF := condUint(reth, "infiniband.reth.va", "Virtual Address", FTUint64, BaseHex, 0, 0, 8, hasVA, func(p *Packet) uint64 {
		if p.Has&HdrRETH != 0 {
			return p.RETH.VA
		}
		return p.AtomicETH.VA
	})
	vaF.hdr = 0
	rk := condUint(reth, "infiniband.reth.r_key", "Remote Key", FTUint32, BaseHex, 0, 8, 4, hasVA, func(p *Packet) uint64 {
		if p.Has&HdrRETH != 0 {
			return uint64(p.RETH.RKey)
		}
		return uint64(p.AtomicETH.RKey)
	})
	rk.hdr = 0
	uintField(reth, "infiniband.reth.dmalen", "DMA Length", FTUint32, BaseDecHex, 0, 12, 4, func(p *Packet) uint64 { return uint64(p.RETH.DMALen) })
}
