// Package printer formats decoded packets for people and programs: the
// tshark-like summary line, -T fields, JSON and the -V tree. Everything is
// generated from decode's field registry; nothing here decodes bytes.
package printer

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"

	"github.com/rocetap/rocetap/decode"
)

// AppendAddr appends the packet's source (src) or destination address as
// tshark's Source and Destination columns show them.
func AppendAddr(dst []byte, p *decode.Packet, src bool) []byte { return appendAddr(dst, p, src) }

func appendAddr(dst []byte, p *decode.Packet, src bool) []byte {
	if q := p.Inner(); q != nil {
		p = q // IPoIB over RoCEv2: the carried packet's addresses, as tshark
	}
	switch {
	case p.Has&decode.HdrIPv4 != 0:
		a := p.IPv4.Dst
		if src {
			a = p.IPv4.Src
		}
		return netip.AddrFrom4(a).AppendTo(dst)
	case p.Has&decode.HdrIPv6 != 0:
		a := p.IPv6.Dst
		if src {
			a = p.IPv6.Src
		}
		return netip.AddrFrom16(a).AppendTo(dst)
	case p.Has&decode.HdrGRH != 0:
		a := p.GRH.DGID
		if src {
			a = p.GRH.SGID
		}
		return netip.AddrFrom16(a).AppendTo(dst)
	case p.Has&decode.HdrLRH != 0:
		l := p.LRH.DLID
		if src {
			l = p.LRH.SLID
		}
		dst = append(dst, "LID: "...)
		return strconv.AppendUint(dst, uint64(l), 10)
	case p.Has&decode.HdrEth != 0:
		a := p.Eth.Dst
		if src {
			a = p.Eth.Src
		}
		return appendMAC(dst, a[:])
	}
	return dst
}

func appendMAC(dst, b []byte) []byte {
	const hx = "0123456789abcdef"
	for i, c := range b {
		if i > 0 {
			dst = append(dst, ':')
		}
		dst = append(dst, hx[c>>4], hx[c&0xF])
	}
	return dst
}

// Protocol returns the Protocol column: RoCEv2, RoCEv1, InfiniBand, PFC,
// PAUSE, UDP, IPv4, IPv6, Ethernet.
func Protocol(p *decode.Packet) string {
	if netSummary(p) {
		return netProtocol(p) // ARP, ICMP, ICMPv6, TCP, UDP, LLDP, ... (netsummary.go)
	}
	switch {
	case p.Has&decode.HdrCM != 0:
		return "IB CM"
	case p.Encap != decode.EncapNone:
		return p.Encap.String()
	case p.Has&decode.HdrPFC != 0:
		return "PFC"
	case p.Has&decode.HdrPause != 0:
		return "PAUSE"
	case p.Has&decode.HdrUDP != 0:
		return "UDP"
	case p.Has&decode.HdrIPv4 != 0:
		return "IPv4"
	case p.Has&decode.HdrIPv6 != 0:
		return "IPv6"
	case p.Has&decode.HdrEth != 0:
		return "Ethernet"
	}
	return "Unknown"
}

// AppendInfo appends the Info column: opcode, QP, PSN and the values of
// the extended headers an RDMA engineer looks at first.
func AppendInfo(dst []byte, p *decode.Packet) []byte {
	dst = appendInfoHead(dst, p)
	dst = appendULP(dst, p)
	return appendFlags(dst, p)
}

// appendInfoHead appends the Info column up to its upper-layer protocol
// part: what AppendInfo and AppendInfoULP put before it.
func appendInfoHead(dst []byte, p *decode.Packet) []byte {
	start := len(dst)
	sp := func() {
		if len(dst) > start {
			dst = append(dst, ' ')
		}
	}
	hex := func(name string, v uint64, width int) {
		sp()
		dst = append(dst, name...)
		dst = append(dst, "=0x"...)
		var b [16]byte
		s := strconv.AppendUint(b[:0], v, 16) // FormatUint allocated
		for i := len(s); i < width; i++ {
			dst = append(dst, '0')
		}
		dst = append(dst, s...)
	}
	dec := func(name string, v uint64) {
		sp()
		dst = append(dst, name...)
		dst = append(dst, '=')
		dst = strconv.AppendUint(dst, v, 10)
	}
	switch {
	case netSummary(p):
		dst = appendNetInfo(dst, p) // netsummary.go
	case p.Has&decode.HdrBTH != 0:
		if p.Has&decode.HdrCM != 0 {
			dst = appendCM(dst, p)
		} else if p.Has&decode.HdrMAD != 0 {
			dst = decode.AppendMADInfo(dst, p.MAD.MgmtClass, p.MAD.MethodByte(), p.MAD.AttributeID)
		} else {
			dst = append(dst, p.BTH.Opcode.String()...)
		}
		hex("QP", uint64(p.BTH.DestQP), 6)
		dec("PSN", uint64(p.BTH.PSN))
		if p.BTH.AckReq {
			dst = append(dst, " A"...)
		}
		if p.BTH.BECN {
			dst = append(dst, " BECN"...)
		}
		if p.BTH.FECN {
			dst = append(dst, " FECN"...)
		}
		if p.Has&decode.HdrDETH != 0 {
			hex("QKey", uint64(p.DETH.QKey), 8)
			hex("SrcQP", uint64(p.DETH.SrcQP), 6)
		}
		if p.Has&decode.HdrXRCETH != 0 {
			hex("XRCSRQ", uint64(p.XRCETH.XRCSRQ), 6)
		}
		if p.Has&decode.HdrRETH != 0 {
			hex("VA", p.RETH.VA, 16)
			hex("RKey", uint64(p.RETH.RKey), 8)
			dec("Len", uint64(p.RETH.DMALen))
		}
		if p.Has&decode.HdrAtomicETH != 0 {
			hex("VA", p.AtomicETH.VA, 16)
			hex("RKey", uint64(p.AtomicETH.RKey), 8)
			hex("SwapAdd", p.AtomicETH.SwapAddData, 0)
			hex("Cmp", p.AtomicETH.CompareData, 0)
		}
		if p.Has&decode.HdrAETH != 0 {
			sp()
			dst = append(dst, decode.SyndromeString(p.AETH.Syndrome)...)
			dec("MSN", uint64(p.AETH.MSN))
		}
		if p.Has&decode.HdrAtomicAckETH != 0 {
			hex("Orig", p.AtomicAckETH.OrigRemData, 0)
		}
		if p.Has&decode.HdrImmDt != 0 {
			hex("Imm", uint64(p.ImmDt.Data), 8)
		}
		if p.Has&decode.HdrIETH != 0 {
			hex("InvRKey", uint64(p.IETH.RKey), 8)
		}
		if p.Has&decode.HdrFETH != 0 {
			dec("Sel", uint64(p.FETH.Selectivity))
			dec("PLT", uint64(p.FETH.Placement))
		}
		if p.BTH.Opcode.HasPayload() || len(p.Payload) > 0 {
			if p.Has&decode.HdrMAD == 0 {
				dec("PayLen", uint64(len(p.Payload)))
			}
		}
	case p.Has&decode.HdrPFC != 0:
		dst = append(dst, "PFC: Class Enable Vector=0x"...)
		dst = strconv.AppendUint(dst, uint64(p.PFC.ClassEnable), 16)
		for i, q := range p.PFC.Quanta {
			if p.PFC.ClassEnable&(1<<i) != 0 {
				dst = append(dst, " P"...)
				dst = strconv.AppendInt(dst, int64(i), 10)
				dst = append(dst, '=')
				dst = strconv.AppendUint(dst, uint64(q), 10)
			}
		}
	case p.Has&decode.HdrPause != 0:
		dst = append(dst, "PAUSE quanta="...)
		dst = strconv.AppendUint(dst, uint64(p.PFC.Quanta[0]), 10)
	}
	if ecn, ok := p.ECN(); ok && ecn == 3 && p.Has&decode.HdrBTH != 0 {
		dst = append(dst, " ECN-CE"...)
	}
	return dst
}

func appendCM(dst []byte, p *decode.Packet) []byte {
	dst = append(dst, "CM: "...)
	return append(dst, decode.CMAttrName(p.MAD.AttributeID)...)
}

func appendFlags(dst []byte, p *decode.Packet) []byte {
	f := p.Flags
	if f&decode.FlagICRCBad != 0 {
		dst = append(dst, " [ICRC bad]"...)
	}
	if f&decode.FlagVCRCBad != 0 {
		dst = append(dst, " [VCRC bad]"...)
	}
	if f&decode.FlagTruncated != 0 {
		dst = append(dst, " [truncated]"...)
	} else if f&decode.FlagICRCUnverifiable != 0 {
		dst = append(dst, " [ICRC unverifiable]"...)
	}
	if f&decode.FlagUnknownOpcode != 0 {
		dst = append(dst, " [unknown opcode]"...)
	}
	if f&(decode.FlagMalformed|decode.FlagBadPad) != 0 {
		dst = append(dst, " [malformed]"...)
	}
	if f&decode.FlagFragment != 0 {
		dst = append(dst, " [IP fragment]"...)
	}
	if f&decode.FlagUnsupportedLink != 0 {
		dst = append(dst, " [unsupported link type]"...)
	}
	return appendAnalysis(dst, &p.Analysis)
}

// appendAnalysis appends the tracker's findings, as Wireshark shows TCP
// analysis in brackets: " [PSN gap: 2 lost] [Retransmission]".
func appendAnalysis(dst []byte, a *decode.Analysis) []byte {
	e := a.Events
	if a.QPError != 0 && e&(decode.EventRetryExc|decode.EventRNRRetryExc) == 0 {
		dst = append(dst, " [To a QP likely in error]"...)
	}
	if e == 0 {
		return dst
	}
	if e&decode.EventPSNGap != 0 {
		if a.Lost == 0 { // only the event is known (the TUI's index)
			dst = append(dst, " [PSN gap]"...)
		} else {
			dst = append(dst, " [PSN gap: "...)
			dst = strconv.AppendUint(dst, uint64(a.Lost), 10)
			dst = append(dst, " lost]"...)
		}
	}
	for _, l := range analysisLabels {
		if e&l.e != 0 {
			dst = append(dst, l.label...)
		}
	}
	if e&decode.EventMPTViolation != 0 {
		if a.MPT.Why == "" { // only the event is known (the TUI's index)
			dst = append(dst, " [MPT violation]"...)
		} else {
			dst = append(dst, " [MPT: "...)
			dst = append(dst, a.MPT.Why...)
			dst = append(dst, ']')
		}
	}
	return dst
}

var analysisLabels = []struct {
	e     decode.Event
	label string
}{
	{decode.EventRetransmission, " [Retransmission]"},
	{decode.EventDuplicate, " [Duplicate]"},
	{decode.EventOutOfOrder, " [Out-of-order]"},
	{decode.EventAckCoalesced, " [Coalesced ACK]"},
	{decode.EventUnmatched, " [No matching request]"},
	{decode.EventMidStream, " [Started before capture]"},
	{decode.EventOpcodeSeq, " [Opcode out of sequence]"},
	{decode.EventECNCE, " [ECN CE]"},
	{decode.EventMPTAccepted, " [MPT: accepted a forbidden access]"},
	{decode.EventMPTRejected, " [MPT: NAKed an allowed access]"},
	{decode.EventIncomplete, " [Incomplete message]"},
	{decode.EventRetryExc, " [Requester likely gave up: retry exceeded]"},
	{decode.EventRNRRetryExc, " [Requester likely gave up: RNR retry exceeded]"},
	{decode.EventCEWithoutCNP, " [CE mark without CNP]"},
	{decode.EventCNPWithoutCE, " [CNP without CE mark]"},
	{decode.EventNoRateCut, " [No rate reduction after CNP]"},
	{decode.EventCNPUnknownQP, " [CNP to unknown QP]"},
	{decode.EventPFCStorm, " [PFC storm]"},
	{decode.EventPFCPaused, " [Sent while paused]"},
	{decode.EventPFCUnusedPrio, " [Pause of a priority without RoCE]"},
}

func pad(dst []byte, start, width int, right bool) []byte {
	n := len([]rune(string(dst[start:])))
	if n >= width {
		return dst
	}
	if right {
		return append(dst, spaces[:width-n]...)
	}
	// left-pad: shift the text right.
	fill := width - n
	dst = append(dst, spaces[:fill]...)
	copy(dst[start+fill:], dst[start:len(dst)-fill])
	copy(dst[start:start+fill], spaces[:fill])
	return dst
}

const spaces = "                                                  "

// AppendSummary appends the one-line summary tshark prints without -V:
// number, relative time, source → destination, protocol, length, info.
func AppendSummary(dst []byte, p *decode.Packet) []byte {
	return AppendSummaryTime(dst, p, TimeRelative, 0)
}

// TimeFormat is how the summary shows a packet's time: tshark's -t.
type TimeFormat uint8

const (
	TimeRelative     TimeFormat = iota // r: seconds since the first packet (the default)
	TimeAbsolute                       // a: local time of day
	TimeAbsoluteDate                   // ad: local date and time
	TimeDelta                          // d: since the previous packet
	TimeDeltaShown                     // dd: since the previous packet shown
	TimeEpoch                          // e: seconds since 1970
	TimeUTC                            // u: UTC time of day
	TimeUTCDate                        // ud: UTC date and time
)

// TimeFormats are -t's values, by TimeFormat.
var TimeFormats = []string{"r", "a", "ad", "d", "dd", "e", "u", "ud"}

// ParseTimeFormat reads -t's value.
func ParseTimeFormat(s string) (TimeFormat, error) {
	for i, n := range TimeFormats {
		if n == s {
			return TimeFormat(i), nil
		}
	}
	return 0, fmt.Errorf("-t %q: want one of %s (as tshark: relative, absolute, absolute with date, delta, delta shown, epoch, UTC, UTC with date)", s, strings.Join(TimeFormats, ", "))
}

// AppendSummaryTime is AppendSummary with the time shown as tf; prevShown
// is the time (Unix ns) of the previous packet shown, for TimeDeltaShown
// (0 for the first).
func AppendSummaryTime(dst []byte, p *decode.Packet, tf TimeFormat, prevShown int64) []byte {
	s := len(dst)
	dst = strconv.AppendInt(dst, int64(p.Frame.Number), 10)
	dst = pad(dst, s, 5, false)
	dst = append(dst, ' ')
	s = len(dst)
	dst = AppendTime(dst, p, tf, prevShown)
	dst = pad(dst, s, 11, false)
	dst = append(dst, ' ')
	s = len(dst)
	dst = appendAddr(dst, p, true)
	dst = pad(dst, s, 12, false)
	dst = append(dst, " → "...)
	s = len(dst)
	dst = appendAddr(dst, p, false)
	dst = pad(dst, s, 12, true)
	dst = append(dst, ' ')
	dst = append(dst, Protocol(p)...)
	dst = append(dst, ' ')
	dst = strconv.AppendInt(dst, int64(p.Frame.Len), 10)
	dst = append(dst, ' ')
	return AppendInfo(dst, p)
}

// AppendTime appends p's time as tf shows it (tshark's -t); prevShown is
// the time (Unix ns) of the previous packet shown, for TimeDeltaShown (0
// for the first).
func AppendTime(dst []byte, p *decode.Packet, tf TimeFormat, prevShown int64) []byte {
	t := p.Frame.Time
	switch tf {
	case TimeAbsolute:
		dst = t.Local().AppendFormat(dst, "15:04:05.000000")
	case TimeAbsoluteDate:
		dst = t.Local().AppendFormat(dst, "2006-01-02 15:04:05.000000")
	case TimeUTC:
		dst = t.UTC().AppendFormat(dst, "15:04:05.000000")
	case TimeUTCDate:
		dst = t.UTC().AppendFormat(dst, "2006-01-02 15:04:05.000000")
	case TimeEpoch:
		dst = decode.AppendSeconds(dst, t.UnixNano(), 6)
	case TimeDelta:
		dst = decode.AppendSeconds(dst, int64(p.Frame.TimeDelta), 6)
	case TimeDeltaShown:
		var d int64
		if prevShown != 0 {
			d = t.UnixNano() - prevShown
		}
		dst = decode.AppendSeconds(dst, d, 6)
	default:
		dst = decode.AppendSeconds(dst, int64(p.Frame.TimeRelative), 6)
	}
	return dst
}
