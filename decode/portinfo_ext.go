package decode

import "strings"

// PortInfo past LinkRoundTripLatency (IBA 1.3 14.2.5.6, Table 152), which
// Wireshark 4.0 does not decode; offsets and widths as rdma-core's
// libibmad declares them (fields.c: CapabilityMask2 BITSOFFS(480,16),
// LinkSpeedExtActive (496,4), LinkSpeedExtSupported (500,4),
// LinkSpeedExtEnabled (507,5)):
//
//	51 ClientReregister (1) MulticastPKeyTrapSuppressionEnabled (2) SubnetTimeOut (5)
//	60 CapabilityMask2 (16)
//	62 LinkSpeedExtActive (4) | LinkSpeedExtSupported (4)
//	63 Reserved (3) | LinkSpeedExtEnabled (5)
//
// Bytes 60-63 are reserved on a port that does not set the CapabilityMask
// bits that announce them, so, as libibmad's ibportstate does, the
// extended speeds are shown only when IsExtendedSpeedsSupported (bit 14)
// is set and CapabilityMask2 only when IsCapabilityMask2Supported (bit 15)
// is.
const (
	PortCapExtendedSpeeds   = 1 << 14 // IsExtendedSpeedsSupported
	PortCapCapabilityMask2  = 1 << 15 // IsCapabilityMask2Supported
	portInfoCapabilityMaskO = 20      // offset of CapabilityMask in PortInfo
)

// portInfoWhen returns a function giving the PortInfo bytes of p (from
// data) when its CapabilityMask has every bit of capBits set.
func portInfoWhen(data func(*Packet) []byte, capBits uint32) func(*Packet) []byte {
	return func(p *Packet) []byte {
		a := data(p)
		if len(a) < portInfoCapabilityMaskO+4 {
			return nil
		}
		if uint32(beUint(a[portInfoCapabilityMaskO:portInfoCapabilityMaskO+4]))&capBits != capBits {
			return nil
		}
		return a
	}
}

// extSpeedNames name the bits of LinkSpeedExtActive, LinkSpeedExtSupported
// and LinkSpeedExtEnabled, as libibmad's mad_dump_linkspeedext* print
// them (IBA 1.3: FDR, EDR; HDR and NDR from later releases).
var extSpeedNames = [...]struct {
	bit  uint64
	name string
}{{1, "14.0625 Gbps"}, {2, "25.78125 Gbps"}, {4, "53.125 Gbps"}, {8, "106.25 Gbps"}}

// extSpeedActiveName names one active extended speed.
func extSpeedActiveName(v uint64) string {
	if v == 0 {
		return "No Extended Speed"
	}
	for _, s := range extSpeedNames {
		if s.bit == v {
			return s.name
		}
	}
	return ""
}

// extSpeedSetName names a set of extended speeds ("14.0625 Gbps or
// 25.78125 Gbps"); LinkSpeedExtEnabled's 0, 30 and 31 are commands
// (IBA 14.2.5.6).
func extSpeedSetName(enabled bool) func(uint64) string {
	return func(v uint64) string {
		if enabled {
			switch v {
			case 0:
				return "No State Change"
			case 30:
				return "Disable extended link speeds"
			case 31:
				return "Set to LinkSpeedExtSupported"
			}
		}
		var parts []string
		for _, s := range extSpeedNames {
			if v&s.bit != 0 {
				parts = append(parts, s.name)
				v &^= s.bit
			}
		}
		if v != 0 || len(parts) == 0 {
			return ""
		}
		return strings.Join(parts, " or ")
	}
}

// registerPortInfoExtFields registers bytes 60-63 of PortInfo, under at,
// data giving the PortInfo bytes. (The CapabilityMask bits and
// MulticastPKeyTrapSuppressionEnabled, always present, are rows of
// portInfoFields, next to their neighbours.)
func registerPortInfoExtFields(at *Field, data func(*Packet) []byte) {
	attrFields(at, portInfoWhen(data, PortCapCapabilityMask2), 1, 0, []attrField{
		{"rocetap.portinfo.capabilitymask2", "CapabilityMask2", FTUint16, 0, 60},
	})
	ext := attrFields(at, portInfoWhen(data, PortCapExtendedSpeeds), 1, 0, []attrField{
		{"rocetap.portinfo.linkspeedextactive", "LinkSpeedExtActive", FTUint8, 0xf0, 62},
		{"rocetap.portinfo.linkspeedextsupported", "LinkSpeedExtSupported", FTUint8, 0x0f, 62},
		{"rocetap.portinfo.linkspeedextenabled", "LinkSpeedExtEnabled", FTUint8, 0x1f, 63},
	})
	ext["rocetap.portinfo.linkspeedextactive"].names = extSpeedActiveName
	ext["rocetap.portinfo.linkspeedextsupported"].names = extSpeedSetName(false)
	ext["rocetap.portinfo.linkspeedextenabled"].names = extSpeedSetName(true)
}
