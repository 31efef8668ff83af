package printer

import (
	"github.com/rocetap/rocetap/decode"
)

// ULPText is the upper-layer protocol part of p's Info, without the " | "
// before it ("NFS COMPOUND SEQUENCE PUTFH READ xid=0x1d94a661 Call"); ""
// when p has none. The TUI keeps it from its index pass, when the tracker
// has just seen p, for AppendInfoULP.
func ULPText(p *decode.Packet) string {
	b := appendULP(nil, p)
	if len(b) < len(" | ") {
		return ""
	}
	return string(b[len(" | "):])
}

// AppendInfoULP appends p's Info as AppendInfo does, with text (what
// ULPText returned when the packet was tracked) as its upper-layer
// protocol part instead of what p.Analysis.ULP holds: for a view that
// renders a packet alone, long after the tracker saw it.
func AppendInfoULP(dst []byte, p *decode.Packet, text string) []byte {
	u := p.Analysis.ULP
	p.Analysis.ULP = nil
	start := len(dst)
	dst = AppendInfo(dst, p)
	p.Analysis.ULP = u
	if text == "" {
		return dst
	}
	// The ULP part goes where AppendInfo puts it: before the flags and
	// the analysis, which end the line.
	tail := len(appendFlags(nil, p))
	at := max(len(dst)-tail, start)
	rest := append([]byte(nil), dst[at:]...)
	dst = append(dst[:at], " | "...)
	dst = decode.AppendSanitized(dst, text)
	return append(dst, rest...)
}
