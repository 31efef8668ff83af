package decode

import (
	"encoding/binary"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
)

// word32 is the shared implementation of the one-word extended headers
// (ImmDt, IETH, FETH): four bytes, big-endian.
type word32 struct {
	layers.BaseLayer
	nextLayer
}

func (w *word32) decode(name string, data []byte, df gopacket.DecodeFeedback) (uint32, error) {
	if len(data) < 4 {
		df.SetTruncated()
		return 0, truncated(name, 4, len(data))
	}
	w.Contents, w.Payload = data[:4], data[4:]
	return binary.BigEndian.Uint32(data), nil
}

func serialize32(b gopacket.SerializeBuffer, v uint32) error {
	d, err := b.PrependBytes(4)
	if err != nil {
		return err
	}
	binary.BigEndian.PutUint32(d, v)
	return nil
}

// ImmDt is the Immediate Data Extended Transport Header (IBA 9.3.7): four
// bytes the requester hands to the responder's receive completion.
type ImmDt struct {
	word32
	Data uint32
}

func (h *ImmDt) LayerType() gopacket.LayerType  { return LayerTypeImmDt }
func (h *ImmDt) CanDecode() gopacket.LayerClass { return LayerTypeImmDt }

// DecodeFromBytes decodes an ImmDt at the start of data.
func (h *ImmDt) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) (err error) {
	h.Data, err = h.decode("immdt", data, df)
	return err
}

// SerializeTo prepends the ImmDt.
func (h *ImmDt) SerializeTo(b gopacket.SerializeBuffer, _ gopacket.SerializeOptions) error {
	return serialize32(b, h.Data)
}

// IETH is the Invalidate Extended Transport Header (IBA 9.3.8): the rkey a
// SEND with Invalidate asks the responder to invalidate.
type IETH struct {
	word32
	RKey uint32
}

func (h *IETH) LayerType() gopacket.LayerType  { return LayerTypeIETH }
func (h *IETH) CanDecode() gopacket.LayerClass { return LayerTypeIETH }

// DecodeFromBytes decodes an IETH at the start of data.
func (h *IETH) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) (err error) {
	h.RKey, err = h.decode("ieth", data, df)
	return err
}

// SerializeTo prepends the IETH.
func (h *IETH) SerializeTo(b gopacket.SerializeBuffer, _ gopacket.SerializeOptions) error {
	return serialize32(b, h.RKey)
}

// FETH is the FLUSH Extended Transport Header (IBA 1.5, Memory Placement
// Extensions): selectivity level and placement type of a FLUSH.
//
//	+-----------------------------------------------------+---+-----+
//	|                  Reserved (26)                      |SEL| PLT |
//	+-----------------------------------------------------+---+-----+
type FETH struct {
	word32
	Reserved    uint32 // 26 bits
	Selectivity uint8  // 2 bits: 0 memory region range, 1 memory region
	Placement   uint8  // 4 bits: bit 0 global visibility, bit 1 persistence
}

func (h *FETH) LayerType() gopacket.LayerType  { return LayerTypeFETH }
func (h *FETH) CanDecode() gopacket.LayerClass { return LayerTypeFETH }

// DecodeFromBytes decodes a FETH at the start of data.
func (h *FETH) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	v, err := h.decode("feth", data, df)
	h.Reserved, h.Selectivity, h.Placement = v>>6, uint8(v>>4)&3, uint8(v)&0x0F
	return err
}

// SerializeTo prepends the FETH.
func (h *FETH) SerializeTo(b gopacket.SerializeBuffer, _ gopacket.SerializeOptions) error {
	return serialize32(b, h.Reserved<<6|uint32(h.Selectivity&3)<<4|uint32(h.Placement&0x0F))
}

// CNPLen is the length of the reserved block after BTH in a RoCEv2 CNP.
const CNPLen = 16

// CNPPadding is the 16 reserved bytes that follow BTH in a RoCEv2 Congestion
// Notification Packet (opcode 0x81, BECN set).
type CNPPadding struct {
	layers.BaseLayer
}

func (h *CNPPadding) LayerType() gopacket.LayerType     { return LayerTypeCNP }
func (h *CNPPadding) CanDecode() gopacket.LayerClass    { return LayerTypeCNP }
func (h *CNPPadding) NextLayerType() gopacket.LayerType { return gopacket.LayerTypeZero }

// DecodeFromBytes decodes the 16 reserved bytes.
func (h *CNPPadding) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	if len(data) < CNPLen {
		df.SetTruncated()
		return truncated("cnp", CNPLen, len(data))
	}
	h.Contents, h.Payload = data[:CNPLen], data[CNPLen:]
	return nil
}

// SerializeTo prepends 16 zero bytes.
func (h *CNPPadding) SerializeTo(b gopacket.SerializeBuffer, _ gopacket.SerializeOptions) error {
	d, err := b.PrependBytes(CNPLen)
	if err != nil {
		return err
	}
	clear(d)
	return nil
}

// setNext does nothing: nothing follows the CNP's padding but the ICRC.
func (h *CNPPadding) setNext(gopacket.LayerType) {}

// registerFETHFields registers the FETH fields (rocetap.*: Wireshark 4.0 has none).
func registerFETHFields(ib *Field) {
	feth := hdrField("rocetap.feth", "FLUSH Extended Transport Header", FTBytes, HdrFETH, func(p *Packet) []byte { return p.FETH.Contents })
	feth.Parent = ib
	uintField(feth, "rocetap.feth.sel", "Selectivity Level", FTUint8, BaseDec, 0x30, 3, 1, func(p *Packet) uint64 { return uint64(p.FETH.Selectivity) })
	uintField(feth, "rocetap.feth.plt", "Placement Type", FTUint8, BaseDec, 0x0f, 3, 1, func(p *Packet) uint64 { return uint64(p.FETH.Placement) })
}

// registerImmDtFields registers the ImmDt fields.
func registerImmDtFields(ib *Field) {
	imm := hdrField("infiniband.immdt", "Immediate Data", FTBytes, HdrImmDt, func(p *Packet) []byte { return p.ImmDt.Contents })
	imm.Parent = ib
	uintField(imm, "rocetap.immdt.value", "Immediate Data", FTUint32, BaseHex, 0, 0, 4, func(p *Packet) uint64 { return uint64(p.ImmDt.Data) })
}

// registerIETHFields registers the IETH fields.
func registerIETHFields(ib *Field) {
	ieth := hdrField("infiniband.ieth", "RKey", FTBytes, HdrIETH, func(p *Packet) []byte { return p.IETH.Contents })
	ieth.Parent = ib
	uintField(ieth, "rocetap.ieth.r_key", "Invalidated Remote Key", FTUint32, BaseHex, 0, 0, 4, func(p *Packet) uint64 { return uint64(p.IETH.RKey) })
}

// registerCNPFields registers the CNP padding (rocetap.cnp).
func registerCNPFields(ib *Field) {
	cnp := hdrField("rocetap.cnp", "CNP Reserved", FTBytes, HdrCNP, func(p *Packet) []byte { return p.CNP.Contents })
	cnp.Parent = ib
}
