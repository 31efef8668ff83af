package decode

import (
	"encoding/binary"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
)

// BTHLen is the length of the Base Transport Header.
const BTHLen = 12

// BTH is the InfiniBand Base Transport Header (IBA 9.2), present in every
// transport packet.
//
//	 0                   1                   2                   3
//	 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|    OpCode     |S|M|Pad|TVer   |           Partition Key       |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|F|B| Reserved6 |            Destination QP                     |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|A| Reserved7   |        Packet Sequence Number                 |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
type BTH struct {
	layers.BaseLayer
	Opcode    Opcode
	SE        bool  // solicited event
	MigReq    bool  // M: migration state
	PadCount  uint8 // bytes of pad before the ICRC (0-3)
	TVer      uint8 // transport header version, 0
	PKey      uint16
	FECN      bool
	BECN      bool
	Reserved6 uint8
	DestQP    uint32 // 24 bits
	AckReq    bool   // A
	Reserved7 uint8
	PSN       PSN // 24 bits
}

// LayerType returns LayerTypeBTH.
func (b *BTH) LayerType() gopacket.LayerType { return LayerTypeBTH }

// CanDecode returns LayerTypeBTH.
func (b *BTH) CanDecode() gopacket.LayerClass { return LayerTypeBTH }

// NextLayerType returns the first extended header the opcode puts after BTH,
// or the payload layer. (A MAD always follows a DETH: see carriesMAD.)
func (b *BTH) NextLayerType() gopacket.LayerType {
	if ext := b.Opcode.ExtHeaders(); len(ext) > 0 {
		return extRow(ext[0]).layer
	}
	return gopacket.LayerTypePayload
}

// DecodeFromBytes decodes the 12-byte BTH at the start of data.
func (b *BTH) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	if len(data) < BTHLen {
		df.SetTruncated()
		return truncated("bth", BTHLen, len(data))
	}
	b.Opcode = Opcode(data[0])
	f := data[1]
	b.SE = f&0x80 != 0
	b.MigReq = f&0x40 != 0
	b.PadCount = (f >> 4) & 3
	b.TVer = f & 0x0F
	b.PKey = binary.BigEndian.Uint16(data[2:])
	b.FECN = data[4]&0x80 != 0
	b.BECN = data[4]&0x40 != 0
	b.Reserved6 = data[4] & 0x3F
	b.DestQP = uint32(data[5])<<16 | uint32(data[6])<<8 | uint32(data[7])
	b.AckReq = data[8]&0x80 != 0
	b.Reserved7 = data[8] & 0x7F
	b.PSN = PSN(get24(data[9:]))
	b.Contents = data[:BTHLen]
	b.Payload = data[BTHLen:]
	return nil
}

// SerializeTo prepends the BTH.
func (b *BTH) SerializeTo(buf gopacket.SerializeBuffer, opts gopacket.SerializeOptions) error {
	d, err := buf.PrependBytes(BTHLen)
	if err != nil {
		return err
	}
	d[0] = byte(b.Opcode)
	d[1] = boolBit(b.SE, 0x80) | boolBit(b.MigReq, 0x40) | (b.PadCount&3)<<4 | b.TVer&0x0F
	binary.BigEndian.PutUint16(d[2:], b.PKey)
	d[4] = boolBit(b.FECN, 0x80) | boolBit(b.BECN, 0x40) | b.Reserved6&0x3F
	put24(d[5:], b.DestQP)
	d[8] = boolBit(b.AckReq, 0x80) | b.Reserved7&0x7F
	put24(d[9:], uint32(b.PSN))
	return nil
}

func boolBit(v bool, bit byte) byte {
	if v {
		return bit
	}
	return 0
}

func put24(d []byte, v uint32) {
	d[0] = byte(v >> 16)
	d[1] = byte(v >> 8)
	d[2] = byte(v)
}

func get24(d []byte) uint32 { return uint32(d[0])<<16 | uint32(d[1])<<8 | uint32(d[2]) }

// registerBTHFields registers the BTH fields (Wireshark 4.0 names, types and bases; rocetap.bth.* for what Wireshark does not name).
func registerBTHFields(ib *Field) {
	bth := hdrField("infiniband.bth", "Base Transport Header", FTBytes, HdrBTH, func(p *Packet) []byte { return p.BTH.Contents })
	bth.Parent = ib
	op := uintField(bth, "infiniband.bth.opcode", "Opcode", FTUint8, BaseDec, 0, 0, 1, func(p *Packet) uint64 { return uint64(p.BTH.Opcode) })
	op.names = func(v uint64) string { return Opcode(v).String() }
	boolField(bth, "infiniband.bth.se", "Solicited Event", 0x80, 1, func(p *Packet) bool { return p.BTH.SE })
	boolField(bth, "infiniband.bth.m", "MigReq", 0x40, 1, func(p *Packet) bool { return p.BTH.MigReq })
	uintField(bth, "infiniband.bth.padcnt", "Pad Count", FTUint8, BaseDec, 0x30, 1, 1, func(p *Packet) uint64 { return uint64(p.BTH.PadCount) })
	uintField(bth, "infiniband.bth.tver", "Header Version", FTUint8, BaseDec, 0x0f, 1, 1, func(p *Packet) uint64 { return uint64(p.BTH.TVer) })
	uintField(bth, "infiniband.bth.p_key", "Partition Key", FTUint16, BaseDec, 0, 2, 2, func(p *Packet) uint64 { return uint64(p.BTH.PKey) })
	boolField(bth, "rocetap.bth.fecn", "Forward ECN", 0x80, 4, func(p *Packet) bool { return p.BTH.FECN })
	boolField(bth, "rocetap.bth.becn", "Backward ECN", 0x40, 4, func(p *Packet) bool { return p.BTH.BECN })
	uintField(bth, "rocetap.bth.reserved6", "Reserved (6 bits)", FTUint8, BaseHex, 0x3f, 4, 1, func(p *Packet) uint64 { return uint64(p.BTH.Reserved6) })
	uintField(bth, "infiniband.bth.destqp", "Destination Queue Pair", FTUint24, BaseHex, 0, 5, 3, func(p *Packet) uint64 { return uint64(p.BTH.DestQP) })
	boolField(bth, "infiniband.bth.a", "Acknowledge Request", 0x80, 8, func(p *Packet) bool { return p.BTH.AckReq })
	uintField(bth, "infiniband.bth.reserved7", "Reserved (7 bits)", FTUint8, BaseDec, 0x7f, 8, 1, func(p *Packet) uint64 { return uint64(p.BTH.Reserved7) })
	uintField(bth, "infiniband.bth.psn", "Packet Sequence Number", FTUint24, BaseDec, 0, 9, 3, func(p *Packet) uint64 { return uint64(p.BTH.PSN) })
}
