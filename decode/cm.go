package decode

import (
	"encoding/binary"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
)

// CM attribute IDs (IBA 12.6, Table 104): the AttributeID of a MAD of
// management class 0x07.
const (
	CMAttrClassPortInfo uint16 = 0x0001
	CMAttrREQ           uint16 = 0x0010 // ConnectRequest
	CMAttrMRA           uint16 = 0x0011 // Message Receipt Acknowledgement
	CMAttrREJ           uint16 = 0x0012 // ConnectReject
	CMAttrREP           uint16 = 0x0013 // ConnectReply
	CMAttrRTU           uint16 = 0x0014 // ReadyToUse
	CMAttrDREQ          uint16 = 0x0015 // DisconnectRequest
	CMAttrDREP          uint16 = 0x0016 // DisconnectReply
	CMAttrSIDRREQ       uint16 = 0x0017 // ServiceIDResReq
	CMAttrSIDRREP       uint16 = 0x0018 // ServiceIDResReqResp
	CMAttrLAP           uint16 = 0x0019 // LoadAlternatePath
	CMAttrAPR           uint16 = 0x001A // AlternatePathResponse
)

// CMAddInfoLen is the length of the REJ ARI and of the SIDR_REP and APR
// additional information.
const CMAddInfoLen = 72

// CMPath is a path of a REQ (primary and alternate) or LAP (alternate).
type CMPath struct {
	LocalLID        uint16
	RemoteLID       uint16
	LocalGID        [16]byte
	RemoteGID       [16]byte
	FlowLabel       uint32 // 20 bits
	PacketRate      uint8  // 6 bits
	TrafficClass    uint8
	HopLimit        uint8
	SL              uint8 // 4 bits
	SubnetLocal     bool
	LocalACKTimeout uint8 // 5 bits
	Reserved0       uint8 // REQ: the 6 bits between FlowLabel and PacketRate; LAP: the 4 between FlowLabel and TrafficClass
	Reserved1       uint8 // the 3 bits after SubnetLocal
	Reserved2       uint8 // the 3 bits after LocalACKTimeout (REQ alternate path: 0x4 is SAP Supported)
}

// CM is the attribute of a Communication Management MAD (IBA 12.6): the
// 232 bytes after the MAD header. It is one flat struct for every
// attribute; only the fields of AttributeID's message are valid (each field
// says which messages carry it). Byte fields (PrivateData, AddInfo) point
// into the decoded data.
//
// REQ (0x0010), offsets in bytes from the start of the attribute:
//
//	  0 Local Communication ID (32)     4 Reserved (32)
//	  8 Service ID (64)                16 Local CA GUID (64)
//	 24 Reserved (32)                  28 Local Q_Key (32)
//	 32 Local QPN (24) | Responder Resources (8)
//	 36 Local EECN (24) | Initiator Depth (8)
//	 40 Remote EECN (24) | Remote CM Response Timeout (5) Transport Service Type (2) End-to-End Flow Control (1)
//	 44 Starting PSN (24) | Local CM Response Timeout (5) Retry Count (3)
//	 48 Partition Key (16) | Path MTU (4) RDC Exists (1) RNR Retry Count (3) | Max CM Retries (4) SRQ (1) Extended Transport Type (3)
//	 52 primary path (44 bytes)        96 alternate path (44 bytes)
//	140 Private Data (92 bytes)
//
// A path: Local Port LID (16) | Remote Port LID (16), Local Port GID (128),
// Remote Port GID (128), Flow Label (20) Reserved (6) Packet Rate (6),
// Traffic Class (8) | Hop Limit (8) | SL (4) Subnet Local (1) Reserved (3) |
// Local ACK Timeout (5) Reserved (3).
type CM struct {
	layers.BaseLayer

	// AttributeID says which message the fields describe; it comes from
	// the MAD header. DecodeFromBytes reads it from Link when Link is set
	// (for a gopacket.DecodingLayerParser holding both layers).
	AttributeID uint16
	Link        *MAD

	LocalCommID             uint32 // all but SIDR_REQ, SIDR_REP
	RemoteCommID            uint32 // all but REQ, SIDR_REQ, SIDR_REP
	ServiceID               uint64 // REQ, SIDR_REQ, SIDR_REP
	LocalCAGUID             uint64 // REQ, REP
	LocalQKey               uint32 // REQ, REP
	LocalQPN                uint32 // REQ, REP (24 bits)
	LocalEECN               uint32 // REQ, REP (Local EE Context Number; 24 bits)
	RemoteEECN              uint32 // REQ (24 bits)
	RemoteQPN               uint32 // DREQ, LAP: Remote QPN/EECN (24 bits)
	StartingPSN             PSN    // REQ, REP
	ResponderResources      uint8  // REQ, REP
	InitiatorDepth          uint8  // REQ, REP
	RemoteCMResponseTimeout uint8  // REQ, LAP (5 bits)
	TransportServiceType    uint8  // REQ (2 bits): 0 RC, 1 UC, 2 RD
	EndToEndFlowControl     bool   // REQ, REP
	LocalCMResponseTimeout  uint8  // REQ (5 bits)
	RetryCount              uint8  // REQ (3 bits)
	PKey                    uint16 // REQ, SIDR_REQ
	PathMTU                 uint8  // REQ (4 bits): 1 = 256 ... 5 = 4096
	RDCExists               bool   // REQ
	RNRRetryCount           uint8  // REQ, REP (3 bits)
	MaxCMRetries            uint8  // REQ (4 bits)
	SRQ                     bool   // REQ, REP
	ExtendedTransportType   uint8  // REQ (3 bits)
	Primary                 CMPath // REQ
	Alternate               CMPath // REQ, LAP
	TargetACKDelay          uint8  // REP (5 bits)
	FailoverAccepted        uint8  // REP (2 bits)
	MessageRejected         uint8  // REJ (2 bits): 0 REQ, 1 REP, 2 none
	RejectInfoLength        uint8  // REJ (7 bits)
	Reason                  uint16 // REJ
	MessageMRAed            uint8  // MRA (2 bits): 0 REQ, 1 REP, 2 LAP
	ServiceTimeout          uint8  // MRA (5 bits)
	RequestID               uint32 // SIDR_REQ, SIDR_REP
	QPN                     uint32 // SIDR_REP (24 bits)
	QKey                    uint32 // SIDR_REP
	Status                  uint8  // SIDR_REP status, APR AP status
	AddInfoLength           uint8  // SIDR_REP, APR
	// Reserved0 and Reserved1 keep reserved bits Wireshark shows: REJ,
	// the 6 bits after Message REJected and the bit after Reject Info
	// Length; REP, Reserved0 is the 4 bits after SRQ.
	Reserved0 uint8
	Reserved1 uint8

	AddInfo     []byte // REJ ARI, SIDR_REP ClassPortInfo, APR additional information (72 bytes)
	PrivateData []byte // every message's private data
}

// LayerType returns LayerTypeCM.
func (c *CM) LayerType() gopacket.LayerType { return LayerTypeCM }

// CanDecode returns LayerTypeCM.
func (c *CM) CanDecode() gopacket.LayerClass { return LayerTypeCM }

// NextLayerType returns the payload layer (bytes after the 232-byte
// attribute, normally none).
func (c *CM) NextLayerType() gopacket.LayerType { return gopacket.LayerTypePayload }

// Has reports whether the attribute bytes decoded cover [off, off+n): a
// field is valid only when the capture holds all of it.
func (c *CM) Has(off, n int) bool { return len(c.Contents) >= off+n }

// cmPrivate returns where an attribute's private data sits, or ok false
// for an attribute rocetap does not decode.
func cmPrivate(attr uint16) (off, n int, ok bool) {
	switch attr {
	case CMAttrREQ:
		return 140, 92, true
	case CMAttrMRA:
		return 10, 222, true
	case CMAttrREJ, CMAttrAPR:
		return 84, 148, true
	case CMAttrREP:
		return 36, 196, true
	case CMAttrRTU, CMAttrDREP:
		return 8, 224, true
	case CMAttrDREQ:
		return 12, 220, true
	case CMAttrSIDRREQ:
		return 16, 216, true
	case CMAttrSIDRREP:
		return 96, 136, true
	case CMAttrLAP:
		return 64, 168, true
	}
	return 0, 0, false
}

// sub returns data[off:off+n], cut at the end of data, or nil when off is
// past it.
func sub(data []byte, off, n int) []byte {
	if off >= len(data) {
		return nil
	}
	return data[off:min(off+n, len(data))]
}

// DecodeFromBytes decodes the CM attribute (AttributeID, or Link's) at the
// start of data. When data holds fewer than MADDataLen bytes it decodes the
// fields that fit (see Has), sets Contents to the bytes present and returns
// an error wrapping ErrTruncated.
func (c *CM) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	if c.Link != nil {
		c.AttributeID = c.Link.AttributeID
	}
	if err := c.decode(data); err != nil {
		df.SetTruncated()
		return err
	}
	return nil
}

// decode decodes data as attribute c.AttributeID, resetting every other
// field. It allocates only for the error about a short attribute.
func (c *CM) decode(data []byte) error {
	*c = CM{AttributeID: c.AttributeID, Link: c.Link}
	n := min(len(data), MADDataLen)
	c.Contents, c.Payload = data[:n], data[n:]
	// Fields are read from b, zero-padded when the attribute is cut short;
	// the fields past the cut are then not valid (Has).
	b := data
	var pad [MADDataLen]byte
	if n < MADDataLen {
		copy(pad[:], data)
		b = pad[:]
	}
	be := binary.BigEndian
	switch c.AttributeID {
	case CMAttrREQ:
		c.LocalCommID = be.Uint32(b[0:])
		c.ServiceID = be.Uint64(b[8:])
		c.LocalCAGUID = be.Uint64(b[16:])
		c.LocalQKey = be.Uint32(b[28:])
		c.LocalQPN, c.ResponderResources = get24(b[32:]), b[35]
		c.LocalEECN, c.InitiatorDepth = get24(b[36:]), b[39]
		c.RemoteEECN = get24(b[40:])
		c.RemoteCMResponseTimeout, c.TransportServiceType, c.EndToEndFlowControl = b[43]>>3, b[43]>>1&3, b[43]&1 != 0
		c.StartingPSN = PSN(get24(b[44:]))
		c.LocalCMResponseTimeout, c.RetryCount = b[47]>>3, b[47]&7
		c.PKey = be.Uint16(b[48:])
		c.PathMTU, c.RDCExists, c.RNRRetryCount = b[50]>>4, b[50]&8 != 0, b[50]&7
		c.MaxCMRetries, c.SRQ, c.ExtendedTransportType = b[51]>>4, b[51]&8 != 0, b[51]&7
		c.Primary.decodeREQ(b[52:96])
		c.Alternate.decodeREQ(b[96:140])
	case CMAttrMRA:
		c.LocalCommID, c.RemoteCommID = be.Uint32(b[0:]), be.Uint32(b[4:])
		c.MessageMRAed = b[8] >> 6
		c.ServiceTimeout = b[9] >> 3
	case CMAttrREJ:
		c.LocalCommID, c.RemoteCommID = be.Uint32(b[0:]), be.Uint32(b[4:])
		c.MessageRejected, c.Reserved0 = b[8]>>6, b[8]&0x3F
		c.RejectInfoLength, c.Reserved1 = b[9]>>1, b[9]&1
		c.Reason = be.Uint16(b[10:])
		c.AddInfo = sub(data, 12, CMAddInfoLen)
	case CMAttrREP:
		c.LocalCommID, c.RemoteCommID = be.Uint32(b[0:]), be.Uint32(b[4:])
		c.LocalQKey = be.Uint32(b[8:])
		c.LocalQPN = get24(b[12:])
		c.LocalEECN = get24(b[16:])
		c.StartingPSN = PSN(get24(b[20:]))
		c.ResponderResources, c.InitiatorDepth = b[24], b[25]
		c.TargetACKDelay, c.FailoverAccepted, c.EndToEndFlowControl = b[26]>>3, b[26]>>1&3, b[26]&1 != 0
		c.RNRRetryCount, c.SRQ, c.Reserved0 = b[27]>>5, b[27]&0x10 != 0, b[27]&0x0F
		c.LocalCAGUID = be.Uint64(b[28:])
	case CMAttrRTU, CMAttrDREP:
		c.LocalCommID, c.RemoteCommID = be.Uint32(b[0:]), be.Uint32(b[4:])
	case CMAttrDREQ:
		c.LocalCommID, c.RemoteCommID = be.Uint32(b[0:]), be.Uint32(b[4:])
		c.RemoteQPN = get24(b[8:])
	case CMAttrSIDRREQ:
		c.RequestID = be.Uint32(b[0:])
		c.PKey = be.Uint16(b[4:])
		c.ServiceID = be.Uint64(b[8:])
	case CMAttrSIDRREP:
		c.RequestID = be.Uint32(b[0:])
		c.Status, c.AddInfoLength = b[4], b[5]
		c.QPN = get24(b[8:])
		c.ServiceID = be.Uint64(b[12:])
		c.QKey = be.Uint32(b[20:])
		c.AddInfo = sub(data, 24, CMAddInfoLen)
	case CMAttrLAP:
		c.LocalCommID, c.RemoteCommID = be.Uint32(b[0:]), be.Uint32(b[4:])
		c.RemoteQPN, c.RemoteCMResponseTimeout = get24(b[12:]), b[15]>>3
		c.Alternate.decodeLAP(b[20:64])
	case CMAttrAPR:
		c.LocalCommID, c.RemoteCommID = be.Uint32(b[0:]), be.Uint32(b[4:])
		c.AddInfoLength, c.Status = b[8], b[9]
		c.AddInfo = sub(data, 12, CMAddInfoLen)
	}
	if off, ln, ok := cmPrivate(c.AttributeID); ok {
		c.PrivateData = sub(data, off, ln)
	}
	if n < MADDataLen {
		return truncated("cm", MADDataLen, n)
	}
	return nil
}

// decodeREQ decodes a 44-byte REQ path.
func (h *CMPath) decodeREQ(b []byte) {
	h.LocalLID = binary.BigEndian.Uint16(b[0:])
	h.RemoteLID = binary.BigEndian.Uint16(b[2:])
	copy(h.LocalGID[:], b[4:20])
	copy(h.RemoteGID[:], b[20:36])
	w := binary.BigEndian.Uint32(b[36:])
	h.FlowLabel, h.Reserved0, h.PacketRate = w>>12, uint8(w>>6)&0x3F, uint8(w)&0x3F
	h.TrafficClass, h.HopLimit = b[40], b[41]
	h.SL, h.SubnetLocal, h.Reserved1 = b[42]>>4, b[42]&8 != 0, b[42]&7
	h.LocalACKTimeout, h.Reserved2 = b[43]>>3, b[43]&7
}

func (h *CMPath) encodeREQ(b []byte) {
	binary.BigEndian.PutUint16(b[0:], h.LocalLID)
	binary.BigEndian.PutUint16(b[2:], h.RemoteLID)
	copy(b[4:20], h.LocalGID[:])
	copy(b[20:36], h.RemoteGID[:])
	binary.BigEndian.PutUint32(b[36:], h.FlowLabel<<12|uint32(h.Reserved0&0x3F)<<6|uint32(h.PacketRate&0x3F))
	b[40], b[41] = h.TrafficClass, h.HopLimit
	b[42] = h.SL<<4 | b2u8(h.SubnetLocal)<<3 | h.Reserved1&7
	b[43] = h.LocalACKTimeout<<3 | h.Reserved2&7
}

// decodeLAP decodes the 44-byte alternate path of a LAP (bytes 20-63).
func (h *CMPath) decodeLAP(b []byte) {
	h.LocalLID = binary.BigEndian.Uint16(b[0:])
	h.RemoteLID = binary.BigEndian.Uint16(b[2:])
	copy(h.LocalGID[:], b[4:20])
	copy(h.RemoteGID[:], b[20:36])
	w := binary.BigEndian.Uint32(b[36:])
	h.FlowLabel, h.Reserved0, h.TrafficClass = w>>12, uint8(w>>8)&0x0F, uint8(w)
	h.HopLimit, h.PacketRate = b[40], b[41]&0x3F
	h.SL, h.SubnetLocal, h.Reserved1 = b[42]>>4, b[42]&8 != 0, b[42]&7
	h.LocalACKTimeout, h.Reserved2 = b[43]>>3, b[43]&7
}

func (h *CMPath) encodeLAP(b []byte) {
	binary.BigEndian.PutUint16(b[0:], h.LocalLID)
	binary.BigEndian.PutUint16(b[2:], h.RemoteLID)
	copy(b[4:20], h.LocalGID[:])
	copy(b[20:36], h.RemoteGID[:])
	binary.BigEndian.PutUint32(b[36:], h.FlowLabel<<12|uint32(h.Reserved0&0x0F)<<8|uint32(h.TrafficClass))
	b[40], b[41] = h.HopLimit, h.PacketRate&0x3F
	b[42] = h.SL<<4 | b2u8(h.SubnetLocal)<<3 | h.Reserved1&7
	b[43] = h.LocalACKTimeout<<3 | h.Reserved2&7
}

func b2u8(b bool) uint8 {
	if b {
		return 1
	}
	return 0
}

// SerializeTo prepends the 232-byte attribute. Reserved bits the struct
// does not keep are written as zero; PrivateData and AddInfo are cut or
// zero-padded to their size. An attribute rocetap does not decode is
// written from Contents.
func (c *CM) SerializeTo(sb gopacket.SerializeBuffer, _ gopacket.SerializeOptions) error {
	b, err := sb.PrependBytes(MADDataLen)
	if err != nil {
		return err
	}
	clear(b)
	be := binary.BigEndian
	switch c.AttributeID {
	case CMAttrREQ:
		be.PutUint32(b[0:], c.LocalCommID)
		be.PutUint64(b[8:], c.ServiceID)
		be.PutUint64(b[16:], c.LocalCAGUID)
		be.PutUint32(b[28:], c.LocalQKey)
		put24(b[32:], c.LocalQPN)
		b[35] = c.ResponderResources
		put24(b[36:], c.LocalEECN)
		b[39] = c.InitiatorDepth
		put24(b[40:], c.RemoteEECN)
		b[43] = c.RemoteCMResponseTimeout<<3 | (c.TransportServiceType&3)<<1 | b2u8(c.EndToEndFlowControl)
		put24(b[44:], uint32(c.StartingPSN))
		b[47] = c.LocalCMResponseTimeout<<3 | c.RetryCount&7
		be.PutUint16(b[48:], c.PKey)
		b[50] = c.PathMTU<<4 | b2u8(c.RDCExists)<<3 | c.RNRRetryCount&7
		b[51] = c.MaxCMRetries<<4 | b2u8(c.SRQ)<<3 | c.ExtendedTransportType&7
		c.Primary.encodeREQ(b[52:96])
		c.Alternate.encodeREQ(b[96:140])
	case CMAttrMRA:
		be.PutUint32(b[0:], c.LocalCommID)
		be.PutUint32(b[4:], c.RemoteCommID)
		b[8] = c.MessageMRAed << 6
		b[9] = c.ServiceTimeout << 3
	case CMAttrREJ:
		be.PutUint32(b[0:], c.LocalCommID)
		be.PutUint32(b[4:], c.RemoteCommID)
		b[8] = c.MessageRejected<<6 | c.Reserved0&0x3F
		b[9] = c.RejectInfoLength<<1 | c.Reserved1&1
		be.PutUint16(b[10:], c.Reason)
		copy(b[12:12+CMAddInfoLen], c.AddInfo)
	case CMAttrREP:
		be.PutUint32(b[0:], c.LocalCommID)
		be.PutUint32(b[4:], c.RemoteCommID)
		be.PutUint32(b[8:], c.LocalQKey)
		put24(b[12:], c.LocalQPN)
		put24(b[16:], c.LocalEECN)
		put24(b[20:], uint32(c.StartingPSN))
		b[24], b[25] = c.ResponderResources, c.InitiatorDepth
		b[26] = c.TargetACKDelay<<3 | (c.FailoverAccepted&3)<<1 | b2u8(c.EndToEndFlowControl)
		b[27] = c.RNRRetryCount<<5 | b2u8(c.SRQ)<<4 | c.Reserved0&0x0F
		be.PutUint64(b[28:], c.LocalCAGUID)
	case CMAttrRTU, CMAttrDREP:
		be.PutUint32(b[0:], c.LocalCommID)
		be.PutUint32(b[4:], c.RemoteCommID)
	case CMAttrDREQ:
		be.PutUint32(b[0:], c.LocalCommID)
		be.PutUint32(b[4:], c.RemoteCommID)
		put24(b[8:], c.RemoteQPN)
	case CMAttrSIDRREQ:
		be.PutUint32(b[0:], c.RequestID)
		be.PutUint16(b[4:], c.PKey)
		be.PutUint64(b[8:], c.ServiceID)
	case CMAttrSIDRREP:
		be.PutUint32(b[0:], c.RequestID)
		b[4], b[5] = c.Status, c.AddInfoLength
		put24(b[8:], c.QPN)
		be.PutUint64(b[12:], c.ServiceID)
		be.PutUint32(b[20:], c.QKey)
		copy(b[24:24+CMAddInfoLen], c.AddInfo)
	case CMAttrLAP:
		be.PutUint32(b[0:], c.LocalCommID)
		be.PutUint32(b[4:], c.RemoteCommID)
		put24(b[12:], c.RemoteQPN)
		b[15] = c.RemoteCMResponseTimeout << 3
		c.Alternate.encodeLAP(b[20:64])
	case CMAttrAPR:
		be.PutUint32(b[0:], c.LocalCommID)
		be.PutUint32(b[4:], c.RemoteCommID)
		b[8], b[9] = c.AddInfoLength, c.Status
		copy(b[12:12+CMAddInfoLen], c.AddInfo)
	default:
		copy(b, c.Contents)
		return nil
	}
	if off, n, ok := cmPrivate(c.AttributeID); ok {
		copy(b[off:off+n], c.PrivateData)
	}
	return nil
}

// IsIPCM reports whether a REQ's Service ID is in the RDMA IP CM range
// (IBA Annex A11: prefix 0x0000000001, then protocol and port), so its
// private data holds the IP CM header.
func (c *CM) IsIPCM() bool {
	return c.AttributeID == CMAttrREQ && c.ServiceID&0xFFFFFFFFFF000000 == 0x0000000001000000
}

var cmAttrNames = map[uint16]string{
	CMAttrClassPortInfo: "ClassPortInfo",
	CMAttrREQ:           "ConnectRequest",
	CMAttrMRA:           "MsgRcptAck",
	CMAttrREJ:           "ConnectReject",
	CMAttrREP:           "ConnectReply",
	CMAttrRTU:           "ReadyToUse",
	CMAttrDREQ:          "DisconnectRequest",
	CMAttrDREP:          "DisconnectReply",
	CMAttrSIDRREQ:       "ServiceIDResReq",
	CMAttrSIDRREP:       "ServiceIDResReqResp",
	CMAttrLAP:           "LoadAlternatePath",
	CMAttrAPR:           "AlternatePathResponse",
}

// CMAttrString names a CM attribute as Wireshark does ("ConnectRequest"),
// or returns "".
func CMAttrString(attr uint16) string { return cmAttrNames[attr] }

// CMAttrName names a CM attribute as CMAttrString does, and one it does
// not know by its number ("0x001b"): never "", so that counts by name
// never merge two attributes.
func CMAttrName(attr uint16) string {
	if n := cmAttrNames[attr]; n != "" {
		return n
	}
	const hx = "0123456789abcdef"
	return string([]byte{'0', 'x', hx[attr>>12], hx[attr>>8&0xf], hx[attr>>4&0xf], hx[attr&0xf]})
}

var cmRejReasonNames = map[uint16]string{
	1:  "No QP available",
	2:  "No EEC available",
	3:  "No resources available",
	4:  "Timeout",
	5:  "Unsupported request",
	6:  "Invalid Communication ID",
	7:  "Invalid Communication Instance",
	8:  "Invalid Service ID",
	9:  "Invalid Transport Service Type",
	10: "Stale connection",
	11: "RDC does not exist",
	12: "Primary Remote Port GID rejected",
	13: "Primary Remote Port LID rejected",
	14: "Invalid Primary SL",
	15: "Invalid Primary Traffic Class",
	16: "Invalid Primary Hop Limit",
	17: "Invalid Primary Packet Rate",
	18: "Alternate Remote Port GID rejected",
	19: "Alternate Remote Port LID rejected",
	20: "Invalid Alternate SL",
	21: "Invalid Alternate Traffic Class",
	22: "Invalid Alternate Hop Limit",
	23: "Invalid Alternate Packet Rate",
	24: "Port and CM Redirection",
	25: "Port Redirection",
	26: "Invalid Path MTU",
	27: "Insufficient Responder Resources",
	28: "Consumer Reject",
	29: "RNR Retry Count Reject",
	30: "Duplicate Local Communication ID",
	31: "Unsupported Class Version",
	32: "Invalid Primary Flow Label",
	33: "Invalid Alternate Flow Label",
	35: "Vendor Option Not Supported",
}

// CMRejReasonString names a REJ reason (IBA 12.6.7, Table 109), or
// returns "".
func CMRejReasonString(r uint16) string { return cmRejReasonNames[r] }

// registerCMFields registers the CM attribute fields under ib, named, typed
// and based as Wireshark 4.0 declares them (tshark -G fields), so -T fields
// output matches tshark's. Wireshark's own quirks are kept where they
// change what it prints (see the comments); what Wireshark lacks (MRA,
// SIDR, LAP, APR, the spec values it gets wrong) is under rocetap.cm.*.
func registerCMFields(ib *Field) {
	// Wireshark puts a CM attribute under an item named
	// infiniband.smplid.smpdata; CM fields' offsets are from its start.
	// The field keeps Wireshark's name ("SMP Data", as tshark -G fields
	// lists it), but like tshark the tree labels the item with what it
	// holds: "CM ConnectRequest".
	cm := hdrField("infiniband.smplid.smpdata", "SMP Data", FTBytes, HdrCM, func(p *Packet) []byte { return p.CM.Contents })
	cm.Parent = ib
	cm.label = func(b []byte, p *Packet) []byte {
		if name := CMAttrString(p.CM.AttributeID); name != "" {
			return append(append(b, "CM "...), name...)
		}
		return append(b, "CM (Unknown CM Attribute)"...) // tshark's words
	}
	stringField(cm, "rocetap.cm.attribute", "CM attribute", HdrCM, func(p *Packet) string { return CMAttrName(p.CM.AttributeID) })

	// u registers an integer field of attribute attr, present when the
	// capture holds its bytes and when(p), if given, holds.
	u := func(attr uint16, when func(*Packet) bool, abbrev, name string, t FieldType, base Base, mask uint64, off, ln int, get func(c *CM) uint64) *Field {
		return condUint(cm, abbrev, name, t, base, mask, off, ln,
			func(p *Packet) bool {
				return p.CM.AttributeID == attr && p.CM.Has(off, ln) && (when == nil || when(p))
			},
			func(p *Packet) uint64 { return get(&p.CM) })
	}
	// bs registers a bytes field of attribute attr; get returns nil when
	// the field is absent.
	bs := func(attr uint16, when func(*Packet) bool, abbrev, name string, t FieldType, off, ln int, get func(c *CM) []byte) *Field {
		return bytesField(cm, abbrev, name, t, off, ln, func(p *Packet) []byte {
			if p.CM.AttributeID != attr || (when != nil && !when(p)) {
				return nil
			}
			return get(&p.CM)
		})
	}
	// gid returns a GID as an FT_IPv6 value, when the capture holds it.
	gid := func(off int, g func(c *CM) *[16]byte) func(c *CM) []byte {
		return func(c *CM) []byte {
			if !c.Has(off, 16) {
				return nil
			}
			return g(c)[:]
		}
	}
	ipv4 := func(g *[16]byte) uint64 { return uint64(binary.BigEndian.Uint32(g[12:])) }
	reason := func(f *Field, names func(uint64) string) { f.names = names }

	// REQ. Wireshark shows the primary GIDs as IPv4 addresses (bytes
	// 12-15) when the frame's destination is an IPv4 address, else as
	// IPv6; the IP CM fields replace the private data when the Service ID
	// is an IP CM one.
	const req = CMAttrREQ
	overIPv4 := func(p *Packet) bool { return p.Has&HdrIPv4 != 0 }
	notIPv4 := func(p *Packet) bool { return p.Has&HdrIPv4 == 0 }
	ipcm := func(p *Packet) bool { return p.CM.IsIPCM() }
	notIPCM := func(p *Packet) bool { return !p.CM.IsIPCM() }
	u(req, nil, "infiniband.cm.req", "Local Communication ID", FTUint32, BaseHex, 0, 0, 4, func(c *CM) uint64 { return uint64(c.LocalCommID) })
	u(req, nil, "infiniband.cm.req.serviceid", "ServiceID", FTUint64, BaseHex, 0, 8, 8, func(c *CM) uint64 { return c.ServiceID })
	bs(req, ipcm, "infiniband.cm.req.serviceid.prefix", "Prefix", FTBytes, 8, 5, func(c *CM) []byte { return full(c.Contents, 8, 5) })
	u(req, ipcm, "infiniband.cm.req.serviceid.protocol", "Protocol", FTUint8, BaseHex, 0, 13, 1, func(c *CM) uint64 { return c.ServiceID >> 16 & 0xFF })
	u(req, ipcm, "infiniband.cm.req.serviceid.dport", "Destination Port", FTUint16, BaseHex, 0, 14, 2, func(c *CM) uint64 { return c.ServiceID & 0xFFFF })
	u(req, nil, "infiniband.cm.req.localcaguid", "Local CA GUID", FTUint64, BaseHex, 0, 16, 8, func(c *CM) uint64 { return c.LocalCAGUID })
	u(req, nil, "infiniband.cm.req.localqkey", "Local Q_Key", FTUint32, BaseHex, 0, 28, 4, func(c *CM) uint64 { return uint64(c.LocalQKey) })
	u(req, nil, "infiniband.cm.req.localqpn", "Local QPN", FTUint24, BaseHex, 0, 32, 3, func(c *CM) uint64 { return uint64(c.LocalQPN) })
	u(req, nil, "infiniband.cm.req.responderres", "Responder Resources", FTUint8, BaseHex, 0, 35, 1, func(c *CM) uint64 { return uint64(c.ResponderResources) })
	u(req, nil, "infiniband.cm.req.localeecn", "Local EECN", FTUint24, BaseHex, 0, 36, 3, func(c *CM) uint64 { return uint64(c.LocalEECN) })
	u(req, nil, "infiniband.cm.req.initdepth", "Initiator Depth", FTUint8, BaseHex, 0, 39, 1, func(c *CM) uint64 { return uint64(c.InitiatorDepth) })
	u(req, nil, "infiniband.cm.req.remoteeecn", "Remote EECN", FTUint24, BaseHex, 0, 40, 3, func(c *CM) uint64 { return uint64(c.RemoteEECN) })
	u(req, nil, "infiniband.cm.req.remoteresptout", "Remote CM Response Timeout", FTUint8, BaseHex, 0xf8, 43, 1, func(c *CM) uint64 { return uint64(c.RemoteCMResponseTimeout) })
	tst := u(req, nil, "infiniband.cm.req.transpsvctype", "Transport Service Type", FTUint8, BaseHex, 0x6, 43, 1, func(c *CM) uint64 { return uint64(c.TransportServiceType) })
	reason(tst, func(v uint64) string { return [4]string{"RC", "UC", "RD", "Extended"}[v&3] })
	u(req, nil, "infiniband.cm.req.e2eflowctrl", "End-to-End Flow Control", FTUint8, BaseHex, 0x1, 43, 1, func(c *CM) uint64 { return b2u(c.EndToEndFlowControl) })
	u(req, nil, "infiniband.cm.req.startpsn", "Starting PSN", FTUint24, BaseHex, 0, 44, 3, func(c *CM) uint64 { return uint64(c.StartingPSN) })
	u(req, nil, "infiniband.cm.req.localresptout", "Local CM Response Timeout", FTUint8, BaseHex, 0xf8, 47, 1, func(c *CM) uint64 { return uint64(c.LocalCMResponseTimeout) })
	u(req, nil, "infiniband.cm.req.retrcount", "Retry Count", FTUint8, BaseHex, 0x7, 47, 1, func(c *CM) uint64 { return uint64(c.RetryCount) })
	u(req, nil, "infiniband.cm.req.pkey", "Partition Key", FTUint16, BaseHex, 0, 48, 2, func(c *CM) uint64 { return uint64(c.PKey) })
	mtu := u(req, nil, "infiniband.cm.req.pppmtu", "Path Packet Payload MTU", FTUint8, BaseHex, 0xf0, 50, 1, func(c *CM) uint64 { return uint64(c.PathMTU) })
	reason(mtu, func(v uint64) string {
		if v >= 1 && v <= 5 {
			return [...]string{"256", "512", "1024", "2048", "4096"}[v-1]
		}
		return ""
	})
	u(req, nil, "infiniband.cm.req.rdcexist", "RDC Exists", FTUint8, BaseHex, 0x8, 50, 1, func(c *CM) uint64 { return b2u(c.RDCExists) })
	u(req, nil, "infiniband.cm.req.rnrretrcount", "RNR Retry Count", FTUint8, BaseHex, 0x7, 50, 1, func(c *CM) uint64 { return uint64(c.RNRRetryCount) })
	u(req, nil, "infiniband.cm.req.maxcmretr", "Max CM Retries", FTUint8, BaseHex, 0xf0, 51, 1, func(c *CM) uint64 { return uint64(c.MaxCMRetries) })
	u(req, nil, "infiniband.cm.req.srq", "SRQ", FTUint8, BaseHex, 0x8, 51, 1, func(c *CM) uint64 { return b2u(c.SRQ) })
	u(req, nil, "infiniband.cm.req.ext_transport", "Extended Transport", FTUint8, BaseHex, 0x7, 51, 1, func(c *CM) uint64 { return uint64(c.ExtendedTransportType) })
	u(req, nil, "infiniband.cm.req.prim_locallid", "Primary Local Port LID", FTUint16, BaseDec, 0, 52, 2, func(c *CM) uint64 { return uint64(c.Primary.LocalLID) })
	u(req, nil, "infiniband.cm.req.prim_remotelid", "Primary Remote Port LID", FTUint16, BaseDec, 0, 54, 2, func(c *CM) uint64 { return uint64(c.Primary.RemoteLID) })
	bs(req, notIPv4, "infiniband.cm.req.prim_localgid", "Primary Local Port GID", FTIPv6, 56, 16, gid(56, func(c *CM) *[16]byte { return &c.Primary.LocalGID }))
	bs(req, notIPv4, "infiniband.cm.req.prim_remotegid", "Primary Remote Port GID", FTIPv6, 72, 16, gid(72, func(c *CM) *[16]byte { return &c.Primary.RemoteGID }))
	u(req, overIPv4, "infiniband.cm.req.prim_localgid_ipv4", "Primary Local Port GID", FTIPv4, BaseNone, 0, 68, 4, func(c *CM) uint64 { return ipv4(&c.Primary.LocalGID) })
	u(req, overIPv4, "infiniband.cm.req.prim_remotegid_ipv4", "Primary Remote Port GID", FTIPv4, BaseNone, 0, 84, 4, func(c *CM) uint64 { return ipv4(&c.Primary.RemoteGID) })
	// Wireshark reads the flow label as the top 20 bits of the first 3
	// bytes (so it shows only the label's top 12 bits), and the reserved
	// bits and packet rate from the first byte. rocetap.cm.req.* has the
	// spec values.
	u(req, nil, "infiniband.cm.req.prim_flowlabel", "Primary Flow Label", FTUint32, BaseHex, 0xfffff000, 88, 3, func(c *CM) uint64 { return uint64(c.Primary.FlowLabel >> 8) })
	u(req, nil, "infiniband.cm.req.prim_reserved0", "Reserved", FTUint32, BaseHex, 0xfc0, 88, 1, func(c *CM) uint64 { return uint64(c.Primary.FlowLabel >> 18 & 3) })
	u(req, nil, "infiniband.cm.req.prim_pktrate", "Primary Packet Rate", FTUint32, BaseHex, 0x3f, 88, 1, func(c *CM) uint64 { return uint64(c.Primary.FlowLabel >> 12 & 0x3f) })
	u(req, nil, "infiniband.cm.req.prim_tfcclass", "Primary Traffic Class", FTUint8, BaseHex, 0, 92, 1, func(c *CM) uint64 { return uint64(c.Primary.TrafficClass) })
	u(req, nil, "infiniband.cm.req.prim_hoplim", "Primary Hop Limit", FTUint8, BaseHex, 0, 93, 1, func(c *CM) uint64 { return uint64(c.Primary.HopLimit) })
	u(req, nil, "infiniband.cm.req.prim_sl", "Primary SL", FTUint8, BaseHex, 0xf0, 94, 1, func(c *CM) uint64 { return uint64(c.Primary.SL) })
	u(req, nil, "infiniband.cm.req.prim_subnetlocal", "Primary Subnet Local", FTUint8, BaseHex, 0x8, 94, 1, func(c *CM) uint64 { return b2u(c.Primary.SubnetLocal) })
	u(req, nil, "infiniband.cm.req.prim_reserved1", "Reserved", FTUint8, BaseHex, 0x7, 94, 1, func(c *CM) uint64 { return uint64(c.Primary.Reserved1) })
	u(req, nil, "infiniband.cm.req.prim_localacktout", "Primary Local ACK Timeout", FTUint8, BaseHex, 0xf8, 95, 1, func(c *CM) uint64 { return uint64(c.Primary.LocalACKTimeout) })
	u(req, nil, "infiniband.cm.req.prim_reserved2", "Reserved", FTUint8, BaseHex, 0x7, 95, 1, func(c *CM) uint64 { return uint64(c.Primary.Reserved2) })
	u(req, nil, "infiniband.cm.req.alt_locallid", "Alternate Local Port LID", FTUint16, BaseDec, 0, 96, 2, func(c *CM) uint64 { return uint64(c.Alternate.LocalLID) })
	u(req, nil, "infiniband.cm.req.alt_remotelid", "Alternate Remote Port LID", FTUint16, BaseDec, 0, 98, 2, func(c *CM) uint64 { return uint64(c.Alternate.RemoteLID) })
	bs(req, nil, "infiniband.cm.req.alt_localgid", "Alternate Local Port GID", FTBytes, 100, 16, gid(100, func(c *CM) *[16]byte { return &c.Alternate.LocalGID }))
	bs(req, nil, "infiniband.cm.req.alt_remotegid", "Alternate Remote Port GID", FTBytes, 116, 16, gid(116, func(c *CM) *[16]byte { return &c.Alternate.RemoteGID }))
	u(req, nil, "infiniband.cm.req.alt_flowlabel", "Alternate Flow Label", FTUint32, BaseHex, 0xfffff000, 132, 3, func(c *CM) uint64 { return uint64(c.Alternate.FlowLabel >> 8) })
	u(req, nil, "infiniband.cm.req.alt_reserved0", "Reserved", FTUint32, BaseHex, 0xfc0, 132, 1, func(c *CM) uint64 { return uint64(c.Alternate.FlowLabel >> 18 & 3) })
	u(req, nil, "infiniband.cm.req.alt_pktrate", "Alternate Packet Rate", FTUint32, BaseHex, 0x3f, 132, 1, func(c *CM) uint64 { return uint64(c.Alternate.FlowLabel >> 12 & 0x3f) })
	u(req, nil, "infiniband.cm.req.alt_tfcclass", "Alternate Traffic Class", FTUint8, BaseHex, 0, 136, 1, func(c *CM) uint64 { return uint64(c.Alternate.TrafficClass) })
	u(req, nil, "infiniband.cm.req.alt_hoplim", "Alternate Hop Limit", FTUint8, BaseHex, 0, 137, 1, func(c *CM) uint64 { return uint64(c.Alternate.HopLimit) })
	u(req, nil, "infiniband.cm.req.alt_sl", "Alternate SL", FTUint8, BaseHex, 0xf0, 138, 1, func(c *CM) uint64 { return uint64(c.Alternate.SL) })
	u(req, nil, "infiniband.cm.req.alt_subnetlocal", "Alternate Subnet Local", FTUint8, BaseHex, 0x8, 138, 1, func(c *CM) uint64 { return b2u(c.Alternate.SubnetLocal) })
	// Wireshark registers the reserved bits after the alternate local ACK
	// timeout under the same name as those after the subnet local bit, so
	// the field occurs twice.
	ar1 := multiField(cm, "infiniband.cm.req.alt_reserved1", "Reserved", FTUint8, BaseHex, 0, func(p *Packet, out []Value) []Value {
		c := &p.CM
		if c.AttributeID != req {
			return out
		}
		if c.Has(138, 1) {
			out = append(out, Value{U: uint64(c.Alternate.Reserved1)})
		}
		if c.Has(139, 1) {
			out = append(out, Value{U: uint64(c.Alternate.Reserved2)})
		}
		return out
	})
	ar1.Bitmask, ar1.Off, ar1.Len = 0x7, 138, 2
	u(req, nil, "infiniband.cm.req.alt_localacktout", "Alternate Local ACK Timeout", FTUint8, BaseHex, 0xf8, 139, 1, func(c *CM) uint64 { return uint64(c.Alternate.LocalACKTimeout) })
	bs(req, notIPCM, "infiniband.cm.req.private", "PrivateData", FTBytes, 140, 92, func(c *CM) []byte { return c.PrivateData })
	bs(req, ipcm, "infiniband.cm.req.ip_cm", "IP CM Request Msg", FTBytes, 140, 92, func(c *CM) []byte { return c.PrivateData })
	u(req, ipcm, "infiniband.cm.req.ip_cm.majv", "IP CM Major Version", FTUint8, BaseHex, 0xf0, 140, 1, func(c *CM) uint64 { return uint64(c.Contents[140] >> 4) })
	u(req, ipcm, "infiniband.cm.req.ip_cm.minv", "IP CM Minor Version", FTUint8, BaseHex, 0xf, 140, 1, func(c *CM) uint64 { return uint64(c.Contents[140] & 0xF) })
	u(req, ipcm, "infiniband.cm.req.ip_cm.ipv", "IP CM IP Version", FTUint8, BaseHex, 0xf0, 141, 1, func(c *CM) uint64 { return uint64(c.Contents[141] >> 4) })
	u(req, ipcm, "infiniband.cm.req.ip_cm.reserved", "IP CM Reserved", FTUint8, BaseHex, 0xf, 141, 1, func(c *CM) uint64 { return uint64(c.Contents[141] & 0xF) })
	u(req, ipcm, "infiniband.cm.req.ip_cm.sport", "IP CM Source Port", FTUint16, BaseHex, 0, 142, 2, func(c *CM) uint64 { return uint64(binary.BigEndian.Uint16(c.Contents[142:])) })
	ipcmV4 := func(p *Packet) bool { return p.CM.IsIPCM() && p.CM.Has(141, 1) && p.CM.Contents[141]>>4 == 4 }
	ipcmV6 := func(p *Packet) bool { return p.CM.IsIPCM() && p.CM.Has(141, 1) && p.CM.Contents[141]>>4 != 4 }
	bs(req, ipcmV6, "infiniband.cm.req.ip_cm.sip6", "IP CM Source IP", FTIPv6, 144, 16, func(c *CM) []byte { return full(c.Contents, 144, 16) })
	bs(req, ipcmV6, "infiniband.cm.req.ip_cm.dip6", "IP CM Destination IP", FTIPv6, 160, 16, func(c *CM) []byte { return full(c.Contents, 160, 16) })
	u(req, ipcmV4, "infiniband.cm.req.ip_cm.sip4", "IP CM Source IP", FTIPv4, BaseNone, 0, 156, 4, func(c *CM) uint64 { return uint64(binary.BigEndian.Uint32(c.Contents[156:])) })
	u(req, ipcmV4, "infiniband.cm.req.ip_cm.dip4", "IP CM Destination IP", FTIPv4, BaseNone, 0, 172, 4, func(c *CM) uint64 { return uint64(binary.BigEndian.Uint32(c.Contents[172:])) })
	bs(req, ipcm, "infiniband.cm.req.ip_cm.private", "IP CM Consumer PrivateData", FTBytes, 176, 56, func(c *CM) []byte { return sub(c.Contents, 176, 56) })
	u(req, nil, "rocetap.cm.req.prim_flowlabel", "Primary Flow Label", FTUint32, BaseHex, 0xfffff000, 88, 4, func(c *CM) uint64 { return uint64(c.Primary.FlowLabel) })
	u(req, nil, "rocetap.cm.req.prim_pktrate", "Primary Packet Rate", FTUint8, BaseHex, 0x3f, 91, 1, func(c *CM) uint64 { return uint64(c.Primary.PacketRate) })
	u(req, nil, "rocetap.cm.req.alt_flowlabel", "Alternate Flow Label", FTUint32, BaseHex, 0xfffff000, 132, 4, func(c *CM) uint64 { return uint64(c.Alternate.FlowLabel) })
	u(req, nil, "rocetap.cm.req.alt_pktrate", "Alternate Packet Rate", FTUint8, BaseHex, 0x3f, 135, 1, func(c *CM) uint64 { return uint64(c.Alternate.PacketRate) })
	u(req, nil, "rocetap.cm.req.sapsupported", "SAP Supported", FTBoolean, BaseNone, 0x04, 139, 1, func(c *CM) uint64 { return uint64(c.Alternate.Reserved2 >> 2 & 1) })

	// REP.
	const rep = CMAttrREP
	u(rep, nil, "infiniband.cm.rep", "Local Communication ID", FTUint32, BaseHex, 0, 0, 4, func(c *CM) uint64 { return uint64(c.LocalCommID) })
	u(rep, nil, "infiniband.cm.rep.remotecommid", "Remote Communication ID", FTUint32, BaseHex, 0, 4, 4, func(c *CM) uint64 { return uint64(c.RemoteCommID) })
	u(rep, nil, "infiniband.cm.rep.localqkey", "Local Q_Key", FTUint32, BaseHex, 0, 8, 4, func(c *CM) uint64 { return uint64(c.LocalQKey) })
	u(rep, nil, "infiniband.cm.rep.localqpn", "Local QPN", FTUint24, BaseHex, 0, 12, 3, func(c *CM) uint64 { return uint64(c.LocalQPN) })
	u(rep, nil, "infiniband.cm.rep.localeecn", "Local EE Context Number", FTUint24, BaseHex, 0, 16, 3, func(c *CM) uint64 { return uint64(c.LocalEECN) })
	u(rep, nil, "infiniband.cm.rep.startpsn", "Starting PSN", FTUint24, BaseHex, 0, 20, 3, func(c *CM) uint64 { return uint64(c.StartingPSN) })
	u(rep, nil, "infiniband.cm.rep.respres", "Responder Resources", FTUint8, BaseHex, 0, 24, 1, func(c *CM) uint64 { return uint64(c.ResponderResources) })
	u(rep, nil, "infiniband.cm.rep.initdepth", "Initiator Depth", FTUint8, BaseHex, 0, 25, 1, func(c *CM) uint64 { return uint64(c.InitiatorDepth) })
	u(rep, nil, "infiniband.cm.rep.tgtackdelay", "Target ACK Delay", FTUint8, BaseHex, 0xf8, 26, 1, func(c *CM) uint64 { return uint64(c.TargetACKDelay) })
	u(rep, nil, "infiniband.cm.rep.failoveracc", "Failover Accepted", FTUint8, BaseHex, 0x6, 26, 1, func(c *CM) uint64 { return uint64(c.FailoverAccepted) })
	u(rep, nil, "infiniband.cm.rep.e2eflowctrl", "End-To-End Flow Control", FTUint8, BaseHex, 0x1, 26, 1, func(c *CM) uint64 { return b2u(c.EndToEndFlowControl) })
	u(rep, nil, "infiniband.cm.rep.rnrretrcount", "RNR Retry Count", FTUint8, BaseHex, 0xe0, 27, 1, func(c *CM) uint64 { return uint64(c.RNRRetryCount) })
	u(rep, nil, "infiniband.cm.rep.srq", "SRQ", FTUint8, BaseHex, 0x10, 27, 1, func(c *CM) uint64 { return b2u(c.SRQ) })
	u(rep, nil, "infiniband.cm.rep.reserved", "Reserved", FTUint8, BaseHex, 0xf, 27, 1, func(c *CM) uint64 { return uint64(c.Reserved0) })
	u(rep, nil, "infiniband.cm.rep.localcaguid", "Local CA GUID", FTUint64, BaseHex, 0, 28, 8, func(c *CM) uint64 { return c.LocalCAGUID })
	bs(rep, nil, "infiniband.cm.rep.private", "PrivateData", FTBytes, 36, 196, func(c *CM) []byte { return c.PrivateData })

	// RTU.
	const rtu = CMAttrRTU
	u(rtu, nil, "infiniband.cm.rtu.localcommid", "Local Communication ID", FTUint32, BaseHex, 0, 0, 4, func(c *CM) uint64 { return uint64(c.LocalCommID) })
	u(rtu, nil, "infiniband.cm.rtu.remotecommid", "Remote Communication ID", FTUint32, BaseHex, 0, 4, 4, func(c *CM) uint64 { return uint64(c.RemoteCommID) })
	bs(rtu, nil, "infiniband.cm.rtu.private", "PrivateData", FTBytes, 8, 224, func(c *CM) []byte { return c.PrivateData })

	// REJ. Wireshark's reserved0 masks only the low 2 of the 6 reserved
	// bits after Message REJected.
	const rej = CMAttrREJ
	u(rej, nil, "infiniband.cm.rej.localcommid", "Local Communication ID", FTUint32, BaseHex, 0, 0, 4, func(c *CM) uint64 { return uint64(c.LocalCommID) })
	u(rej, nil, "infiniband.cm.rej.remotecommid", "Remote Communication ID", FTUint32, BaseHex, 0, 4, 4, func(c *CM) uint64 { return uint64(c.RemoteCommID) })
	mr := u(rej, nil, "infiniband.cm.rej.msgrej", "Message REJected", FTUint8, BaseHex, 0xc0, 8, 1, func(c *CM) uint64 { return uint64(c.MessageRejected) })
	reason(mr, func(v uint64) string { return [4]string{"REQ", "REP", "No message", ""}[v&3] })
	u(rej, nil, "infiniband.cm.rej.reserved0", "Reserved", FTUint8, BaseHex, 0x3, 8, 1, func(c *CM) uint64 { return uint64(c.Reserved0 & 3) })
	u(rej, nil, "infiniband.cm.rej.rejinfolen", "Reject Info Length", FTUint8, BaseHex, 0xfe, 9, 1, func(c *CM) uint64 { return uint64(c.RejectInfoLength) })
	u(rej, nil, "infiniband.cm.rej.reserved1", "Reserved", FTUint8, BaseHex, 0x1, 9, 1, func(c *CM) uint64 { return uint64(c.Reserved1) })
	rr := u(rej, nil, "infiniband.cm.rej.reason", "Reason", FTUint16, BaseHex, 0, 10, 2, func(c *CM) uint64 { return uint64(c.Reason) })
	reason(rr, func(v uint64) string { return CMRejReasonString(uint16(v)) })
	bs(rej, nil, "infiniband.cm.rej.ari", "Additional Reject Information (ARI)", FTBytes, 12, CMAddInfoLen, func(c *CM) []byte { return c.AddInfo })
	bs(rej, nil, "infiniband.cm.rej.private", "PrivateData", FTBytes, 84, 148, func(c *CM) []byte { return c.PrivateData })

	// DREQ. Wireshark names the remote QPN under infiniband.cm.req.
	const dreq = CMAttrDREQ
	u(dreq, nil, "infiniband.cm.dreq.localcommid", "Local Communication ID", FTUint32, BaseHex, 0, 0, 4, func(c *CM) uint64 { return uint64(c.LocalCommID) })
	u(dreq, nil, "infiniband.cm.dreq.remotecommid", "Remote Communication ID", FTUint32, BaseHex, 0, 4, 4, func(c *CM) uint64 { return uint64(c.RemoteCommID) })
	u(dreq, nil, "infiniband.cm.req.remoteqpneecn", "Remote QPN/EECN", FTUint24, BaseHex, 0, 8, 3, func(c *CM) uint64 { return uint64(c.RemoteQPN) })
	bs(dreq, nil, "infiniband.cm.dreq.private", "PrivateData", FTBytes, 12, 220, func(c *CM) []byte { return c.PrivateData })

	// DREP.
	const drep = CMAttrDREP
	u(drep, nil, "infiniband.cm.drsp.localcommid", "Local Communication ID", FTUint32, BaseHex, 0, 0, 4, func(c *CM) uint64 { return uint64(c.LocalCommID) })
	u(drep, nil, "infiniband.cm.drsp.remotecommid", "Remote Communication ID", FTUint32, BaseHex, 0, 4, 4, func(c *CM) uint64 { return uint64(c.RemoteCommID) })
	bs(drep, nil, "infiniband.cm.drsp.private", "PrivateData", FTBytes, 8, 224, func(c *CM) []byte { return c.PrivateData })

	// MRA: Wireshark 4.0 does not decode it.
	const mra = CMAttrMRA
	u(mra, nil, "rocetap.cm.mra.localcommid", "Local Communication ID", FTUint32, BaseHex, 0, 0, 4, func(c *CM) uint64 { return uint64(c.LocalCommID) })
	u(mra, nil, "rocetap.cm.mra.remotecommid", "Remote Communication ID", FTUint32, BaseHex, 0, 4, 4, func(c *CM) uint64 { return uint64(c.RemoteCommID) })
	mm := u(mra, nil, "rocetap.cm.mra.msgmraed", "Message MRAed", FTUint8, BaseHex, 0xc0, 8, 1, func(c *CM) uint64 { return uint64(c.MessageMRAed) })
	reason(mm, func(v uint64) string { return [4]string{"REQ", "REP", "LAP", ""}[v&3] })
	u(mra, nil, "rocetap.cm.mra.servicetimeout", "Service Timeout", FTUint8, BaseHex, 0xf8, 9, 1, func(c *CM) uint64 { return uint64(c.ServiceTimeout) })
	bs(mra, nil, "rocetap.cm.mra.private", "PrivateData", FTBytes, 10, 222, func(c *CM) []byte { return c.PrivateData })

	// SIDR_REQ and SIDR_REP: Wireshark 4.0 does not decode them.
	const sreq, srep = CMAttrSIDRREQ, CMAttrSIDRREP
	u(sreq, nil, "rocetap.cm.sidr_req.requestid", "Request ID", FTUint32, BaseHex, 0, 0, 4, func(c *CM) uint64 { return uint64(c.RequestID) })
	u(sreq, nil, "rocetap.cm.sidr_req.pkey", "Partition Key", FTUint16, BaseHex, 0, 4, 2, func(c *CM) uint64 { return uint64(c.PKey) })
	u(sreq, nil, "rocetap.cm.sidr_req.serviceid", "ServiceID", FTUint64, BaseHex, 0, 8, 8, func(c *CM) uint64 { return c.ServiceID })
	bs(sreq, nil, "rocetap.cm.sidr_req.private", "PrivateData", FTBytes, 16, 216, func(c *CM) []byte { return c.PrivateData })
	u(srep, nil, "rocetap.cm.sidr_rep.requestid", "Request ID", FTUint32, BaseHex, 0, 0, 4, func(c *CM) uint64 { return uint64(c.RequestID) })
	st := u(srep, nil, "rocetap.cm.sidr_rep.status", "Status", FTUint8, BaseHex, 0, 4, 1, func(c *CM) uint64 { return uint64(c.Status) })
	reason(st, func(v uint64) string {
		if v < 6 {
			return [...]string{"Valid QPN", "Service ID not supported", "Rejected by service provider", "No QP available", "Redirect", "Unsupported class version"}[v]
		}
		return ""
	})
	u(srep, nil, "rocetap.cm.sidr_rep.addinfolen", "Additional Information Length", FTUint8, BaseHex, 0, 5, 1, func(c *CM) uint64 { return uint64(c.AddInfoLength) })
	u(srep, nil, "rocetap.cm.sidr_rep.qpn", "QPN", FTUint24, BaseHex, 0, 8, 3, func(c *CM) uint64 { return uint64(c.QPN) })
	u(srep, nil, "rocetap.cm.sidr_rep.serviceid", "ServiceID", FTUint64, BaseHex, 0, 12, 8, func(c *CM) uint64 { return c.ServiceID })
	u(srep, nil, "rocetap.cm.sidr_rep.qkey", "Q_Key", FTUint32, BaseHex, 0, 20, 4, func(c *CM) uint64 { return uint64(c.QKey) })
	bs(srep, nil, "rocetap.cm.sidr_rep.addinfo", "ClassPortInfo", FTBytes, 24, CMAddInfoLen, func(c *CM) []byte { return c.AddInfo })
	bs(srep, nil, "rocetap.cm.sidr_rep.private", "PrivateData", FTBytes, 96, 136, func(c *CM) []byte { return c.PrivateData })

	// LAP and APR: Wireshark 4.0 does not decode them.
	const lap, apr = CMAttrLAP, CMAttrAPR
	u(lap, nil, "rocetap.cm.lap.localcommid", "Local Communication ID", FTUint32, BaseHex, 0, 0, 4, func(c *CM) uint64 { return uint64(c.LocalCommID) })
	u(lap, nil, "rocetap.cm.lap.remotecommid", "Remote Communication ID", FTUint32, BaseHex, 0, 4, 4, func(c *CM) uint64 { return uint64(c.RemoteCommID) })
	u(lap, nil, "rocetap.cm.lap.remoteqpneecn", "Remote QPN/EECN", FTUint24, BaseHex, 0, 12, 3, func(c *CM) uint64 { return uint64(c.RemoteQPN) })
	u(lap, nil, "rocetap.cm.lap.remoteresptout", "Remote CM Response Timeout", FTUint8, BaseHex, 0xf8, 15, 1, func(c *CM) uint64 { return uint64(c.RemoteCMResponseTimeout) })
	u(lap, nil, "rocetap.cm.lap.alt_locallid", "Alternate Local Port LID", FTUint16, BaseDec, 0, 20, 2, func(c *CM) uint64 { return uint64(c.Alternate.LocalLID) })
	u(lap, nil, "rocetap.cm.lap.alt_remotelid", "Alternate Remote Port LID", FTUint16, BaseDec, 0, 22, 2, func(c *CM) uint64 { return uint64(c.Alternate.RemoteLID) })
	bs(lap, nil, "rocetap.cm.lap.alt_localgid", "Alternate Local Port GID", FTIPv6, 24, 16, gid(24, func(c *CM) *[16]byte { return &c.Alternate.LocalGID }))
	bs(lap, nil, "rocetap.cm.lap.alt_remotegid", "Alternate Remote Port GID", FTIPv6, 40, 16, gid(40, func(c *CM) *[16]byte { return &c.Alternate.RemoteGID }))
	u(lap, nil, "rocetap.cm.lap.alt_flowlabel", "Alternate Flow Label", FTUint32, BaseHex, 0xfffff000, 56, 4, func(c *CM) uint64 { return uint64(c.Alternate.FlowLabel) })
	u(lap, nil, "rocetap.cm.lap.alt_tfcclass", "Alternate Traffic Class", FTUint8, BaseHex, 0, 59, 1, func(c *CM) uint64 { return uint64(c.Alternate.TrafficClass) })
	u(lap, nil, "rocetap.cm.lap.alt_hoplim", "Alternate Hop Limit", FTUint8, BaseHex, 0, 60, 1, func(c *CM) uint64 { return uint64(c.Alternate.HopLimit) })
	u(lap, nil, "rocetap.cm.lap.alt_pktrate", "Alternate Packet Rate", FTUint8, BaseHex, 0x3f, 61, 1, func(c *CM) uint64 { return uint64(c.Alternate.PacketRate) })
	u(lap, nil, "rocetap.cm.lap.alt_sl", "Alternate SL", FTUint8, BaseHex, 0xf0, 62, 1, func(c *CM) uint64 { return uint64(c.Alternate.SL) })
	u(lap, nil, "rocetap.cm.lap.alt_subnetlocal", "Alternate Subnet Local", FTUint8, BaseHex, 0x8, 62, 1, func(c *CM) uint64 { return b2u(c.Alternate.SubnetLocal) })
	u(lap, nil, "rocetap.cm.lap.alt_localacktout", "Alternate Local ACK Timeout", FTUint8, BaseHex, 0xf8, 63, 1, func(c *CM) uint64 { return uint64(c.Alternate.LocalACKTimeout) })
	bs(lap, nil, "rocetap.cm.lap.private", "PrivateData", FTBytes, 64, 168, func(c *CM) []byte { return c.PrivateData })
	u(apr, nil, "rocetap.cm.apr.localcommid", "Local Communication ID", FTUint32, BaseHex, 0, 0, 4, func(c *CM) uint64 { return uint64(c.LocalCommID) })
	u(apr, nil, "rocetap.cm.apr.remotecommid", "Remote Communication ID", FTUint32, BaseHex, 0, 4, 4, func(c *CM) uint64 { return uint64(c.RemoteCommID) })
	u(apr, nil, "rocetap.cm.apr.addinfolen", "Additional Information Length", FTUint8, BaseHex, 0, 8, 1, func(c *CM) uint64 { return uint64(c.AddInfoLength) })
	as := u(apr, nil, "rocetap.cm.apr.apstatus", "AP Status", FTUint8, BaseHex, 0, 9, 1, func(c *CM) uint64 { return uint64(c.Status) })
	reason(as, func(v uint64) string {
		if v < 14 {
			return [...]string{"Path loaded", "Invalid Communication ID", "Unsupported request", "Rejected", "Redirect", "Is current path", "Invalid QPN/EECN", "Invalid LID", "Invalid GID", "Invalid Flow Label", "Invalid Traffic Class", "Invalid Hop Limit", "Invalid Packet Rate", "Invalid SL"}[v]
		}
		return ""
	})
	bs(apr, nil, "rocetap.cm.apr.addinfo", "Additional Information", FTBytes, 12, CMAddInfoLen, func(c *CM) []byte { return c.AddInfo })
	bs(apr, nil, "rocetap.cm.apr.private", "PrivateData", FTBytes, 84, 148, func(c *CM) []byte { return c.PrivateData })
}

// full returns b[off:off+n] when b holds all of it, else nil.
func full(b []byte, off, n int) []byte {
	if len(b) < off+n {
		return nil
	}
	return b[off : off+n]
}
