package decode

import (
	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
)

// Layer types, registered with gopacket in the fast range 1000-1999.
var (
	LayerTypeLRH          = gopacket.RegisterLayerType(1400, gopacket.LayerTypeMetadata{Name: "LRH", Decoder: gopacket.DecodeFunc(decodeLRH)})
	LayerTypeGRH          = gopacket.RegisterLayerType(1401, gopacket.LayerTypeMetadata{Name: "GRH", Decoder: gopacket.DecodeFunc(decodeGRH)})
	LayerTypeBTH          = gopacket.RegisterLayerType(1402, gopacket.LayerTypeMetadata{Name: "BTH", Decoder: gopacket.DecodeFunc(decodeBTH)})
	LayerTypeRDETH        = gopacket.RegisterLayerType(1403, gopacket.LayerTypeMetadata{Name: "RDETH", Decoder: extDecoder(HdrRDETH)})
	LayerTypeDETH         = gopacket.RegisterLayerType(1404, gopacket.LayerTypeMetadata{Name: "DETH", Decoder: extDecoder(HdrDETH)})
	LayerTypeXRCETH       = gopacket.RegisterLayerType(1405, gopacket.LayerTypeMetadata{Name: "XRCETH", Decoder: extDecoder(HdrXRCETH)})
	LayerTypeRETH         = gopacket.RegisterLayerType(1406, gopacket.LayerTypeMetadata{Name: "RETH", Decoder: extDecoder(HdrRETH)})
	LayerTypeAtomicETH    = gopacket.RegisterLayerType(1407, gopacket.LayerTypeMetadata{Name: "AtomicETH", Decoder: extDecoder(HdrAtomicETH)})
	LayerTypeAETH         = gopacket.RegisterLayerType(1408, gopacket.LayerTypeMetadata{Name: "AETH", Decoder: extDecoder(HdrAETH)})
	LayerTypeAtomicAckETH = gopacket.RegisterLayerType(1409, gopacket.LayerTypeMetadata{Name: "AtomicAckETH", Decoder: extDecoder(HdrAtomicAckETH)})
	LayerTypeImmDt        = gopacket.RegisterLayerType(1410, gopacket.LayerTypeMetadata{Name: "ImmDt", Decoder: extDecoder(HdrImmDt)})
	LayerTypeIETH         = gopacket.RegisterLayerType(1411, gopacket.LayerTypeMetadata{Name: "IETH", Decoder: extDecoder(HdrIETH)})
	LayerTypeFETH         = gopacket.RegisterLayerType(1412, gopacket.LayerTypeMetadata{Name: "FETH", Decoder: extDecoder(HdrFETH)})
	LayerTypeCNP          = gopacket.RegisterLayerType(1413, gopacket.LayerTypeMetadata{Name: "CNPPadding", Decoder: extDecoder(HdrCNP)})
	LayerTypeICRC         = gopacket.RegisterLayerType(1414, gopacket.LayerTypeMetadata{Name: "ICRC", Decoder: gopacket.DecodeFunc(decodeICRC)})
	LayerTypeVCRC         = gopacket.RegisterLayerType(1415, gopacket.LayerTypeMetadata{Name: "VCRC", Decoder: gopacket.DecodeFunc(decodeVCRC)})
	LayerTypeMAD          = gopacket.RegisterLayerType(1416, gopacket.LayerTypeMetadata{Name: "MAD", Decoder: gopacket.DecodeFunc(decodeMADLayer)})
	LayerTypeCM           = gopacket.RegisterLayerType(1417, gopacket.LayerTypeMetadata{Name: "CM", Decoder: gopacket.DecodeFunc(decodeCMLayer)})
)

// Subnet management (issue 19). 1418-1429 are left to the other MAD and
// IPoIB layers.
var LayerTypeSMP = gopacket.RegisterLayerType(1430, gopacket.LayerTypeMetadata{Name: "SMP", Decoder: gopacket.DecodeFunc(decodeSMPLayer)})

// Subnet administration: RMPP header, SA header and data (issue 19).
var LayerTypeSA = gopacket.RegisterLayerType(1431, gopacket.LayerTypeMetadata{Name: "SA", Decoder: gopacket.DecodeFunc(decodeSALayer)})

// EtherTypeRoCEv1 is the EtherType of RoCEv1 (GRH first).
const EtherTypeRoCEv1 layers.EthernetType = 0x8915

func init() {
	layers.RegisterUDPPortLayerType(RoCEv2Port, LayerTypeBTH)
	layers.EthernetTypeMetadata[EtherTypeRoCEv1] = layers.EnumMetadata{
		DecodeWith: gopacket.DecodeFunc(decodeGRH), Name: "RoCEv1", LayerType: LayerTypeGRH,
	}
	layers.LinkTypeMetadata[LinkTypeInfiniBand] = layers.EnumMetadata{
		DecodeWith: gopacket.DecodeFunc(decodeLRH), Name: "InfiniBand", LayerType: LayerTypeLRH,
	}
	// ERF records are unwrapped by Decode only: the name is for String(),
	// the decoder stays gopacket's (an error).
	erf := layers.LinkTypeMetadata[LinkTypeERF]
	erf.Name = "ERF"
	layers.LinkTypeMetadata[LinkTypeERF] = erf
}

func decodeICRC(data []byte, p gopacket.PacketBuilder) error {
	h := &ICRC{}
	if err := h.DecodeFromBytes(data, p); err != nil {
		return err
	}
	p.AddLayer(h)
	return nil
}

func decodeVCRC(data []byte, p gopacket.PacketBuilder) error {
	h := &VCRC{}
	if err := h.DecodeFromBytes(data, p); err != nil {
		return err
	}
	p.AddLayer(h)
	return nil
}

func decodeLRH(data []byte, p gopacket.PacketBuilder) error {
	h := &LRH{}
	if err := h.DecodeFromBytes(data, p); err != nil {
		return err
	}
	// Cut the packet at PktLen and split off the VCRC, which the whole
	// chain below decodes before it (trailers are added last).
	end := int(h.PktLen)*4 + VCRCLen
	var vcrc []byte
	if end <= len(data) && end >= LRHLen+VCRCLen {
		vcrc = data[end-VCRCLen : end]
		h.Payload = data[LRHLen : end-VCRCLen]
	}
	p.AddLayer(h)
	var err error
	switch h.LNH {
	case LNHGlobal:
		err = decodeGRHChain(h.Payload, p, true)
	case LNHLocal:
		err = decodeTransportChain(h.Payload, p, true)
	default:
		err = p.NextDecoder(gopacket.LayerTypePayload)
	}
	if err != nil {
		return err
	}
	if vcrc != nil {
		v := &VCRC{}
		_ = v.DecodeFromBytes(vcrc, p)
		p.AddLayer(v)
	}
	return nil
}

func decodeGRH(data []byte, p gopacket.PacketBuilder) error {
	return decodeGRHChain(data, p, true)
}

func decodeGRHChain(data []byte, p gopacket.PacketBuilder, hasICRC bool) error {
	h := &GRH{}
	if err := h.DecodeFromBytes(data, p); err != nil {
		return err
	}
	if end := GRHLen + int(h.PayLen); end <= len(data) {
		h.Payload = data[GRHLen:end]
	}
	p.AddLayer(h)
	p.SetNetworkLayer(nil)
	if h.NextHeader != GRHNextHeaderIBA {
		return p.NextDecoder(gopacket.LayerTypePayload)
	}
	return decodeTransportChain(h.Payload, p, hasICRC)
}

func decodeBTH(data []byte, p gopacket.PacketBuilder) error {
	return decodeTransportChain(data, p, true)
}

// decodeTransportChain decodes BTH, every extended header its opcode calls
// for, the payload (a MAD on QP0/QP1) and the ICRC trailer, adding each as
// a layer. Extended headers are decoded here rather than through
// NextLayerType because which one follows depends on the opcode, not on
// the previous header.
func decodeTransportChain(data []byte, p gopacket.PacketBuilder, hasICRC bool) error {
	var icrc []byte
	if hasICRC && len(data) >= BTHLen+ICRCLen {
		icrc = data[len(data)-ICRCLen:]
		data = data[:len(data)-ICRCLen]
	}
	b := &BTH{}
	if err := b.DecodeFromBytes(data, p); err != nil {
		return err
	}
	p.AddLayer(b)
	rest := b.Payload
	exts := b.Opcode.ExtHeaders()
	srcQP := uint32(0xFFFFFF)
	var last extLayer
	for _, h := range exts {
		l := extRow(h).fresh()
		if err := l.DecodeFromBytes(rest, p); err != nil {
			return err
		}
		if last != nil {
			last.setNext(l.LayerType())
		}
		if d, ok := l.(*DETH); ok {
			srcQP = d.SrcQP
		}
		p.AddLayer(l)
		rest, last = l.LayerPayload(), l
	}
	var padBytes []byte
	if pad := int(b.PadCount); pad <= len(rest) && icrc != nil {
		rest, padBytes = rest[:len(rest)-pad], rest[len(rest)-pad:]
	}
	if len(rest) > 0 {
		if carriesMAD(b.Opcode, b.DestQP, srcQP) {
			if last != nil {
				last.setNext(LayerTypeMAD)
			}
			if err := decodeMADLayer(rest, p); err != nil {
				return err
			}
		} else {
			pl := gopacket.Payload(rest)
			p.AddLayer(&pl)
			p.SetApplicationLayer(&pl)
		}
	}
	if icrc != nil {
		c := &ICRC{Pad: padBytes}
		_ = c.DecodeFromBytes(icrc, p)
		p.AddLayer(c)
	}
	return nil
}

// IPoIB (ipoib.go). Numbered apart from the InfiniBand headers above so
// that headers added there cannot collide with it.
var LayerTypeIPoIB = gopacket.RegisterLayerType(1440, gopacket.LayerTypeMetadata{Name: "IPoIB", Decoder: gopacket.DecodeFunc(decodeIPoIB)})
