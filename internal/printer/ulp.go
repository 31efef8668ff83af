package printer

import "github.com/rocetap/rocetap/decode"

// appendULP appends, after " | " as tshark does, what the packet is to
// its upper-layer protocol: "NVMe Read cid=5 nsid=1 slba=2048 nlb=7 (8
// blocks)".
func appendULP(dst []byte, p *decode.Packet) []byte {
	u := p.Analysis.ULP
	if u == nil {
		return dst
	}
	switch u.Proto {
	case decode.ULPNVMe:
		if u.NVMe.Kind != decode.NVMeNone {
			dst = append(dst, " | "...)
			dst = u.NVMe.AppendSummary(dst)
		}
	case decode.ULPRPCRDMA, decode.ULPISER, decode.ULPSMBDirect:
		if s := ulpSummary(u); s != "" {
			dst = append(dst, " | "...)
			dst = append(dst, s...)
		}
	}
	return dst
}
