package capture

import (
	"strconv"
	"strings"
)

// roceTerms are the untagged part of RoCEFilterExpr.
func roceTerms(pfc bool, extraPorts ...uint16) string {
	s := "(" + udpPortsExpr(extraPorts...) + ") or (ether proto 0x8915)"
	if pfc {
		s += " or (ether proto 0x8808)"
	}
	return s
}

// udpPortsExpr tests the UDP destination port for 4791 and extraPorts.
func udpPortsExpr(extraPorts ...uint16) string {
	terms := []string{"udp dst port 4791"}
	for _, p := range extraPorts {
		terms = append(terms, "udp dst port "+strconv.Itoa(int(p)))
	}
	return strings.Join(terms, " or ")
}

// RoCEFilterExpr is RoCEFilter as a pcap filter expression (man
// pcap-filter), for libpcap and tcpdump: RoCEv2 (UDP destination port
// 4791 or one of extraPorts), RoCEv1 and with pfc the MAC control frames,
// untagged or behind one VLAN tag.
//
//	(udp dst port 4791 [or udp dst port P ...]) or (ether proto 0x8915)
//	[or (ether proto 0x8808)] or (vlan and (the same))
//
// The vlan part comes last because libpcap's vlan keyword moves the
// offsets of every test after it by the tag's 4 bytes: a term appended
// after it would look behind the tag. libpcap's vlan also takes the
// ethertype 0x9100 as a tag, which RoCEFilter does not; on an Ethernet
// frame the two agree otherwise (the libpcap tests check it against every
// frame in testdata).
func RoCEFilterExpr(pfc bool, extraPorts ...uint16) string {
	t := roceTerms(pfc, extraPorts...)
	return t + " or (vlan and (" + t + "))"
}
