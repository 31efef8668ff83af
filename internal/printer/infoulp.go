package printer

import (
	"github.com/rocetap/rocetap/decode"
)

// AppendULPText appends the upper-layer protocol part of p's Info,
// without the " | " before it ("NFS COMPOUND SEQUENCE PUTFH READ
// xid=0x1d94a661 Call"); nothing when p has none. The TUI keeps it from
// its index pass, when the tracker has just seen p, for AppendInfoULP,
// and looks it up before keeping it (every iSER and SMB Direct packet)
// without a string per packet.
func AppendULPText(dst []byte, p *decode.Packet) []byte {
	b := appendULP(dst, p)
	if len(b) == len(dst) {
		return dst
	}
	return append(b[:len(dst)], b[len(dst)+len(" | "):]...) // the text shifted over the " | " in place
}

// AppendInfoULP appends p's Info as AppendInfo does, with text (what
// ULPText returned when the packet was tracked) as its upper-layer
// protocol part instead of what p.Analysis.ULP holds: for a view that
// renders a packet alone, long after the tracker saw it.
func AppendInfoULP(dst []byte, p *decode.Packet, text string) []byte {
	dst = appendInfoHead(dst, p)
	if text != "" {
		dst = append(dst, " | "...)
		dst = decode.AppendSanitized(dst, text)
	}
	return appendFlags(dst, p)
}
