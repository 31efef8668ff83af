package decode

import (
	"math/bits"

	"github.com/gopacket/gopacket"
)

// The extended headers that follow BTH, as one table: a row per header
// with its layer type, wire length, a constructor for the gopacket path
// and its place in Packet for the fast path (gopacket's EnumMetadata
// idea). Both decoders, and the layer registration, read this table; no
// code switches over the headers.

// extLayer is what every extended header implements.
type extLayer interface {
	gopacket.DecodingLayer
	gopacket.Layer
	setNext(gopacket.LayerType)
}

// nextLayer records the layer that follows an extended header in its
// packet: the header cannot know it on its own, it depends on the opcode.
type nextLayer struct{ next gopacket.LayerType }

// NextLayerType returns the layer that follows, the payload by default.
func (n *nextLayer) NextLayerType() gopacket.LayerType {
	if n.next == gopacket.LayerTypeZero {
		return gopacket.LayerTypePayload
	}
	return n.next
}

func (n *nextLayer) setNext(t gopacket.LayerType) { n.next = t }

// extHdr is one row of the table.
type extHdr struct {
	bit   Hdr
	len   int // bytes on the wire
	layer gopacket.LayerType
	fresh func() extLayer // a new layer (the gopacket path)
	// decode decodes the header into its place in p (the fast path).
	decode func(p *Packet, b []byte) error
}

// extHdrs is indexed by the bit position of the header's Hdr bit. It is
// filled by init, not by its declaration: the layer types it names are
// registered with decoders that read it.
var extHdrs [11]extHdr

func init() {
	extHdrs = [...]extHdr{
		{HdrRDETH, RDETHLen, LayerTypeRDETH, func() extLayer { return &RDETH{} },
			func(p *Packet, b []byte) error { return p.RDETH.DecodeFromBytes(b, noFeedback) }},
		{HdrDETH, DETHLen, LayerTypeDETH, func() extLayer { return &DETH{} },
			func(p *Packet, b []byte) error { return p.DETH.DecodeFromBytes(b, noFeedback) }},
		{HdrXRCETH, XRCETHLen, LayerTypeXRCETH, func() extLayer { return &XRCETH{} },
			func(p *Packet, b []byte) error { return p.XRCETH.DecodeFromBytes(b, noFeedback) }},
		{HdrRETH, RETHLen, LayerTypeRETH, func() extLayer { return &RETH{} },
			func(p *Packet, b []byte) error { return p.RETH.DecodeFromBytes(b, noFeedback) }},
		{HdrAtomicETH, AtomicETHLen, LayerTypeAtomicETH, func() extLayer { return &AtomicETH{} },
			func(p *Packet, b []byte) error { return p.AtomicETH.DecodeFromBytes(b, noFeedback) }},
		{HdrAETH, AETHLen, LayerTypeAETH, func() extLayer { return &AETH{} },
			func(p *Packet, b []byte) error { return p.AETH.DecodeFromBytes(b, noFeedback) }},
		{HdrAtomicAckETH, AtomicAckETHLen, LayerTypeAtomicAckETH, func() extLayer { return &AtomicAckETH{} },
			func(p *Packet, b []byte) error { return p.AtomicAckETH.DecodeFromBytes(b, noFeedback) }},
		{HdrImmDt, 4, LayerTypeImmDt, func() extLayer { return &ImmDt{} },
			func(p *Packet, b []byte) error { return p.ImmDt.DecodeFromBytes(b, noFeedback) }},
		{HdrIETH, 4, LayerTypeIETH, func() extLayer { return &IETH{} },
			func(p *Packet, b []byte) error { return p.IETH.DecodeFromBytes(b, noFeedback) }},
		{HdrFETH, 4, LayerTypeFETH, func() extLayer { return &FETH{} },
			func(p *Packet, b []byte) error { return p.FETH.DecodeFromBytes(b, noFeedback) }},
		{HdrCNP, CNPLen, LayerTypeCNP, func() extLayer { return &CNPPadding{} },
			func(p *Packet, b []byte) error { return p.CNP.DecodeFromBytes(b, noFeedback) }},
	}
	for i := range extHdrs {
		if extHdrs[i].bit != 1<<i {
			panic("decode: extHdrs out of order")
		}
	}
}

// extRow returns the row of extended header h (a single Hdr bit).
func extRow(h Hdr) *extHdr { return &extHdrs[bits.TrailingZeros32(uint32(h))] }

// extDecoder decodes one extended header on its own (when a user asks
// gopacket to start at it); the next layer is then the payload.
func extDecoder(h Hdr) gopacket.Decoder {
	return gopacket.DecodeFunc(func(data []byte, p gopacket.PacketBuilder) error {
		l := extRow(h).fresh()
		if err := l.DecodeFromBytes(data, p); err != nil {
			return err
		}
		p.AddLayer(l)
		return p.NextDecoder(gopacket.LayerTypePayload)
	})
}
