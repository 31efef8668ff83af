package decode

// Names of management classes, methods, attributes and status codes of
// the MADs rocetap decodes, as Wireshark 4.0 prints them in the Info
// column (packet-infiniband.c's SUBM_, SUBA_ and CM_ value strings, checked
// against tshark 4.0 in internal/conformance). Where tshark 4.0 prints a
// name wrongly the IBTA name is used and README.md's differences table
// says so: method 0x07 of an SMP is SubnTrapRepress (IBA 14.2.2), not
// tshark's "SubnTrapResp"; PMA methods are named PerfGet, PerfSet,
// PerfGetResp as Wireshark's OPA dissector names them, where tshark 4.0
// prints "PERF (PortCounters)" without the method.

// Subnet management (SMP) attribute IDs (IBA 14.2.5, Table 145).
const (
	SMPAttrNotice                   uint16 = 0x0002
	SMPAttrNodeDescription          uint16 = 0x0010
	SMPAttrNodeInfo                 uint16 = 0x0011
	SMPAttrSwitchInfo               uint16 = 0x0012
	SMPAttrGUIDInfo                 uint16 = 0x0014
	SMPAttrPortInfo                 uint16 = 0x0015
	SMPAttrPKeyTable                uint16 = 0x0016
	SMPAttrSLtoVLMappingTable       uint16 = 0x0017
	SMPAttrVLArbitrationTable       uint16 = 0x0018
	SMPAttrLinearForwardingTable    uint16 = 0x0019
	SMPAttrRandomForwardingTable    uint16 = 0x001A
	SMPAttrMulticastForwardingTable uint16 = 0x001B
	SMPAttrLinkSpeedWidthPairsTable uint16 = 0x001C
	SMPAttrSMInfo                   uint16 = 0x0020
	SMPAttrVendorDiag               uint16 = 0x0030
	SMPAttrLedInfo                  uint16 = 0x0031
)

// Subnet administration (SA) attribute IDs (IBA 15.2.5, Table 205).
const (
	SAAttrClassPortInfo                  uint16 = 0x0001
	SAAttrNotice                         uint16 = 0x0002
	SAAttrInformInfo                     uint16 = 0x0003
	SAAttrNodeRecord                     uint16 = 0x0011
	SAAttrPortInfoRecord                 uint16 = 0x0012
	SAAttrSLtoVLMappingTableRecord       uint16 = 0x0013
	SAAttrSwitchInfoRecord               uint16 = 0x0014
	SAAttrLinearForwardingTableRecord    uint16 = 0x0015
	SAAttrRandomForwardingTableRecord    uint16 = 0x0016
	SAAttrMulticastForwardingTableRecord uint16 = 0x0017
	SAAttrSMInfoRecord                   uint16 = 0x0018
	SAAttrLinkSpeedWidthPairsTableRecord uint16 = 0x0019
	SAAttrLinkRecord                     uint16 = 0x0020
	SAAttrGUIDInfoRecord                 uint16 = 0x0030
	SAAttrServiceRecord                  uint16 = 0x0031
	SAAttrPKeyTableRecord                uint16 = 0x0033
	SAAttrPathRecord                     uint16 = 0x0035
	SAAttrVLArbitrationTableRecord       uint16 = 0x0036
	SAAttrMCMemberRecord                 uint16 = 0x0038
	SAAttrTraceRecord                    uint16 = 0x0039
	SAAttrMultiPathRecord                uint16 = 0x003A
	SAAttrServiceAssociationRecord       uint16 = 0x003B
	SAAttrInformInfoRecord               uint16 = 0x00F3
)

// Performance management (PMA) attribute IDs (IBA 16.1.3, Table 226).
const (
	PMAAttrClassPortInfo                 uint16 = 0x0001
	PMAAttrPortSamplesControl            uint16 = 0x0010
	PMAAttrPortSamplesResult             uint16 = 0x0011
	PMAAttrPortCounters                  uint16 = 0x0012
	PMAAttrPortRcvErrorDetails           uint16 = 0x0015
	PMAAttrPortXmitDiscardDetails        uint16 = 0x0016
	PMAAttrPortOpRcvCounters             uint16 = 0x0017
	PMAAttrPortFlowCtlCounters           uint16 = 0x0018
	PMAAttrPortVLOpPackets               uint16 = 0x0019
	PMAAttrPortVLOpData                  uint16 = 0x001A
	PMAAttrPortVLXmitFlowCtlUpdateErrors uint16 = 0x001B
	PMAAttrPortVLXmitWaitCounters        uint16 = 0x001C
	PMAAttrPortCountersExtended          uint16 = 0x001D
	PMAAttrPortSamplesResultExtended     uint16 = 0x001E
	PMAAttrSwPortVLCongestion            uint16 = 0x0030
)

// smpAttrNames are the SMP attributes tshark 4.0 names in Info.
var smpAttrNames = map[uint16]string{
	SMPAttrNotice:                   "Notice",
	SMPAttrNodeDescription:          "NodeDescription",
	SMPAttrNodeInfo:                 "NodeInfo",
	SMPAttrSwitchInfo:               "SwitchInfo",
	SMPAttrGUIDInfo:                 "GUIDInfo",
	SMPAttrPortInfo:                 "PortInfo",
	SMPAttrPKeyTable:                "P_KeyTable",
	SMPAttrSLtoVLMappingTable:       "SLtoVLMappingTable",
	SMPAttrVLArbitrationTable:       "VLArbitrationTable",
	SMPAttrLinearForwardingTable:    "LinearForwardingTable",
	SMPAttrRandomForwardingTable:    "RandomForwardingTable",
	SMPAttrMulticastForwardingTable: "MulticastForwardingTable",
	SMPAttrLinkSpeedWidthPairsTable: "LinkSpeedWidthPairsTable",
	SMPAttrSMInfo:                   "SMInfo",
	SMPAttrVendorDiag:               "VendorDiag",
	SMPAttrLedInfo:                  "LedInfo",
}

// saAttrNames are the SA attributes tshark 4.0 names in Info (its
// spelling: "GuidInfoRecord").
var saAttrNames = map[uint16]string{
	SAAttrClassPortInfo:                  "ClassPortInfo",
	SAAttrNotice:                         "Notice",
	SAAttrInformInfo:                     "InformInfo",
	SAAttrNodeRecord:                     "NodeRecord",
	SAAttrPortInfoRecord:                 "PortInfoRecord",
	SAAttrSLtoVLMappingTableRecord:       "SLtoVLMappingTableRecord",
	SAAttrSwitchInfoRecord:               "SwitchInfoRecord",
	SAAttrLinearForwardingTableRecord:    "LinearForwardingTableRecord",
	SAAttrRandomForwardingTableRecord:    "RandomForwardingTableRecord",
	SAAttrMulticastForwardingTableRecord: "MulticastForwardingTableRecord",
	SAAttrSMInfoRecord:                   "SMInfoRecord",
	SAAttrLinkSpeedWidthPairsTableRecord: "LinkSpeedWidthPairsTableRecord",
	SAAttrLinkRecord:                     "LinkRecord",
	SAAttrGUIDInfoRecord:                 "GuidInfoRecord",
	SAAttrServiceRecord:                  "ServiceRecord",
	SAAttrPKeyTableRecord:                "P_KeyTableRecord",
	SAAttrPathRecord:                     "PathRecord",
	SAAttrVLArbitrationTableRecord:       "VLArbitrationTableRecord",
	SAAttrMCMemberRecord:                 "MCMemberRecord",
	SAAttrTraceRecord:                    "TraceRecord",
	SAAttrMultiPathRecord:                "MultiPathRecord",
	SAAttrServiceAssociationRecord:       "ServiceAssociationRecord",
	SAAttrInformInfoRecord:               "InformInfoRecord",
}

// pmaAttrNames: tshark 4.0 names ClassPortInfo, PortCounters and
// PortCountersExtended; the others are the IBA's names (Table 226).
var pmaAttrNames = map[uint16]string{
	PMAAttrClassPortInfo:                 "ClassPortInfo",
	PMAAttrPortSamplesControl:            "PortSamplesControl",
	PMAAttrPortSamplesResult:             "PortSamplesResult",
	PMAAttrPortCounters:                  "PortCounters",
	PMAAttrPortRcvErrorDetails:           "PortRcvErrorDetails",
	PMAAttrPortXmitDiscardDetails:        "PortXmitDiscardDetails",
	PMAAttrPortOpRcvCounters:             "PortOpRcvCounters",
	PMAAttrPortFlowCtlCounters:           "PortFlowCtlCounters",
	PMAAttrPortVLOpPackets:               "PortVLOpPackets",
	PMAAttrPortVLOpData:                  "PortVLOpData",
	PMAAttrPortVLXmitFlowCtlUpdateErrors: "PortVLXmitFlowCtlUpdateErrors",
	PMAAttrPortVLXmitWaitCounters:        "PortVLXmitWaitCounters",
	PMAAttrPortCountersExtended:          "PortCountersExtended",
	PMAAttrPortSamplesResultExtended:     "PortSamplesResultExtended",
	PMAAttrSwPortVLCongestion:            "SwPortVLCongestion",
}

// Method names per class, as Info prints them before the attribute.
var (
	smpMethodNames = map[uint8]string{
		MADMethodGet:         "SubnGet",
		MADMethodSet:         "SubnSet",
		MADMethodGetResp:     "SubnGetResp",
		MADMethodTrap:        "SubnTrap",
		MADMethodTrapRepress: "SubnTrapRepress",
	}
	saMethodNames = map[uint8]string{
		MADMethodGet:           "SubnAdmGet",
		MADMethodGetResp:       "SubnAdmGetResp",
		MADMethodSet:           "SubnAdmSet",
		MADMethodReport:        "SubnAdmReport",
		MADMethodReportResp:    "SubnAdmReportResp",
		MADMethodGetTable:      "SubnAdmGetTable",
		MADMethodGetTableResp:  "SubnAdmGetTableResp",
		MADMethodGetTraceTable: "SubnAdmGetTraceTable",
		MADMethodGetMulti:      "SubnAdmGetMulti",
		MADMethodGetMultiResp:  "SubnAdmGetMultiResp",
		MADMethodDelete:        "SubnAdmDelete",
		MADMethodDeleteResp:    "SubnAdmDeleteResp",
	}
	pmaMethodNames = map[uint8]string{
		MADMethodGet:     "PerfGet",
		MADMethodSet:     "PerfSet",
		MADMethodGetResp: "PerfGetResp",
	}
)

// IsSMP reports whether a management class is subnet management, LID
// routed (0x01) or directed route (0x81).
func IsSMP(class uint8) bool {
	return class == MgmtClassSubnLIDRouted || class == MgmtClassSubnDirectRoute
}

// IsVendorClass reports whether a management class is vendor specific:
// 0x09-0x0F, or 0x30-0x4F, whose MADs carry an RMPP header and the
// vendor's OUI (IBA 13.4.4).
func IsVendorClass(class uint8) bool {
	return class >= 0x09 && class <= 0x0F || IsVendorOUIClass(class)
}

// IsVendorOUIClass reports whether a management class is in the vendor
// range with OUI, 0x30-0x4F.
func IsVendorOUIClass(class uint8) bool { return class >= 0x30 && class <= 0x4F }

// MgmtClassAbbrev is the short name of a management class as tshark 4.0
// starts the Info of a class it does not decode ("BM", "DEV_MGT", "SNMP",
// "VENDOR", "APP", "RESERVED"), and "SMP", "SA", "PERF", "CM", "CC" for
// the others. It is never "".
func MgmtClassAbbrev(class uint8) string {
	switch {
	case IsSMP(class):
		return "SMP"
	case class == MgmtClassSubnAdm:
		return "SA"
	case class == MgmtClassPerf:
		return "PERF"
	case class == MgmtClassBM:
		return "BM"
	case class == MgmtClassDevMgt:
		return "DEV_MGT"
	case class == MgmtClassCM:
		return "CM"
	case class == MgmtClassSNMP:
		return "SNMP"
	case class == MgmtClassCC:
		return "CC"
	case IsVendorClass(class):
		return "VENDOR"
	case class >= 0x10 && class <= 0x2F:
		return "APP"
	}
	return "RESERVED"
}

// MADClassMethodString names a method byte (response bit included) of a
// class as Info prints it: "SubnGet", "SubnAdmGetTableResp", "PerfGet";
// for other classes the generic name without parentheses ("Get",
// "GetResp"). It returns "" for a method the class does not define.
func MADClassMethodString(class, method uint8) string {
	switch {
	case IsSMP(class):
		return smpMethodNames[method]
	case class == MgmtClassSubnAdm:
		return saMethodNames[method]
	case class == MgmtClassPerf:
		return pmaMethodNames[method]
	}
	n := madMethodNames[method]
	if len(n) > 2 {
		return n[:len(n)-2] // "Get()" → "Get"
	}
	return ""
}

// MADAttrString names an attribute of a class ("NodeInfo", "PathRecord",
// "PortCounters", "ConnectRequest"), or returns "" for an attribute or
// class rocetap has no name for.
func MADAttrString(class uint8, attr uint16) string {
	switch {
	case IsSMP(class):
		return smpAttrNames[attr]
	case class == MgmtClassSubnAdm:
		return saAttrNames[attr]
	case class == MgmtClassPerf:
		return pmaAttrNames[attr]
	case class == MgmtClassCM:
		return CMAttrString(attr)
	}
	return ""
}

// MADAttrName is MADAttrString, or the attribute's number ("0x0013") when
// it has no name: never "", so that counts by name never merge two
// attributes.
func MADAttrName(class uint8, attr uint16) string {
	if n := MADAttrString(class, attr); n != "" {
		return n
	}
	return string(appendHexInt(nil, uint64(attr), 4))
}

// AppendMADInfo appends the Info text of a MAD other than CM (whose Info
// names the CM message; see CMAttrString): the method and the attribute,
// as tshark 4.0 prints them for SMP and SA ("SubnGet(NodeInfo)",
// "SubnAdmGetTableResp(PathRecord)"), "PerfGet(PortCounters)" for the PMA,
// and the class, the generic method and the attribute number for the
// classes rocetap leaves as bytes ("BM Get(0x0011)", "VENDOR
// GetResp(0x0010)"). An unknown method or attribute prints as its number:
// "SubnGet(0x0013)", "Subn0x03(NodeInfo)".
func AppendMADInfo(dst []byte, class, method uint8, attr uint16) []byte {
	var prefix string
	switch {
	case IsSMP(class):
		prefix = "Subn"
	case class == MgmtClassSubnAdm:
		prefix = "SubnAdm"
	case class == MgmtClassPerf:
		prefix = "Perf"
	default:
		dst = append(dst, MgmtClassAbbrev(class)...)
		dst = append(dst, ' ')
	}
	if n := MADClassMethodString(class, method); n != "" {
		dst = append(dst, n...)
	} else {
		dst = append(dst, prefix...)
		dst = appendHexInt(dst, uint64(method), 2)
	}
	dst = append(dst, '(')
	if n := MADAttrString(class, attr); n != "" {
		dst = append(dst, n...)
	} else {
		dst = appendHexInt(dst, uint64(attr), 4)
	}
	return append(dst, ')')
}

// MAD status (IBA 13.4.7, Table 147): bits 0-4 are common to every class,
// bits 8-14 class specific; bit 15 of a directed-route SMP is the D bit.
const (
	MADStatusBusy             uint16 = 0x0001 // temporarily busy, MAD discarded
	MADStatusRedirect         uint16 = 0x0002 // redirection required
	MADStatusCodeMask         uint16 = 0x001C // invalid-field code, bits 2-4
	MADStatusClassMask        uint16 = 0x7F00 // class-specific bits 8-14
	MADStatusDirectionBit     uint16 = 0x8000 // D bit of a directed-route SMP
	MADStatusBadVersion       uint16 = 0x0004 // code 1
	MADStatusMethodUnsup      uint16 = 0x0008 // code 2
	MADStatusMethodAttrUnsup  uint16 = 0x000C // code 3
	MADStatusInvalidAttrValue uint16 = 0x001C // code 7
)

var madStatusCodes = [8]string{
	"", "bad version", "method not supported", "method/attribute not supported",
	"code 4", "code 5", "code 6", "invalid attribute or modifier value",
}

// SA class-specific status codes (IBA 15.2.1.1, Table 203), bits 8-15.
var saStatusNames = map[uint8]string{
	1: "ERR_NO_RESOURCES",
	2: "ERR_REQ_INVALID",
	3: "ERR_NO_RECORDS",
	4: "ERR_TOO_MANY_RECORDS",
	5: "ERR_REQ_INVALID_GID",
	6: "ERR_REQ_INSUFFICIENT_COMPONENTS",
	7: "ERR_REQ_DENIED",
}

// MADStatusError returns the error bits of a MAD status: the status
// without the D bit of a directed-route SMP, which is not an error.
func MADStatusError(class uint8, status uint16) uint16 {
	if class == MgmtClassSubnDirectRoute {
		return status &^ MADStatusDirectionBit
	}
	return status
}

// AppendMADStatus appends what a MAD status says ("method not supported",
// "busy, redirect", "ERR_NO_RECORDS"), the parts joined by ", ", or "ok"
// when MADStatusError is zero.
func AppendMADStatus(dst []byte, class uint8, status uint16) []byte {
	s := MADStatusError(class, status)
	if s == 0 {
		return append(dst, "ok"...)
	}
	start := len(dst)
	add := func(t string) {
		if len(dst) > start {
			dst = append(dst, ", "...)
		}
		dst = append(dst, t...)
	}
	if s&MADStatusBusy != 0 {
		add("busy")
	}
	if s&MADStatusRedirect != 0 {
		add("redirect")
	}
	if c := (s & MADStatusCodeMask) >> 2; c != 0 {
		add(madStatusCodes[c])
	}
	if cs := s >> 8; cs != 0 {
		if n := saStatusNames[uint8(cs)]; class == MgmtClassSubnAdm && n != "" {
			add(n)
		} else {
			add("class status ")
			dst = appendHexInt(dst, uint64(cs), 2)
		}
	}
	if s&0xE0 != 0 {
		add("reserved bits ")
		dst = appendHexInt(dst, uint64(s&0xE0), 2)
	}
	return dst
}
