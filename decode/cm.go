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
