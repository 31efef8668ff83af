package printer

import (
	"fmt"

	"github.com/rocetap/rocetap/decode"
	"github.com/rocetap/rocetap/flow"
)

// AppendMADStats appends the stats report's subnet section: management
// datagrams by class, method and attribute (SMP, SA, PMA, CM and the
// classes left as bytes), the responses with an error status, and the
// traps. It appends nothing for a capture without MADs.
func AppendMADStats(dst []byte, tt *flow.Totals) []byte {
	mt := &tt.MADs
	if mt.Total == 0 {
		return dst
	}
	dst = fmt.Appendf(dst, "\nManagement datagrams (MADs): %d\n", mt.Total)
	class := -1
	for _, c := range mt.KindCounts() {
		if int(c.Class) != class {
			class = int(c.Class)
			dst = fmt.Appendf(dst, "  %s (class 0x%02x)\n", mgmtClassName(c.Class), c.Class)
		}
		dst = fmt.Appendf(dst, "    %s: %d\n", c.MADKey, c.N)
	}
	if sc := mt.StatusCounts(); len(sc) > 0 {
		dst = append(dst, "  MAD status errors\n"...)
		for _, c := range sc {
			dst = fmt.Appendf(dst, "    %s status 0x%04x (%s): %d\n", c.MADKey, c.Status, decode.AppendMADStatus(nil, c.Class, c.Status), c.N)
		}
	}
	if tc := mt.TrapCounts(); len(tc) > 0 {
		dst = append(dst, "  Traps\n"...)
		for _, c := range tc {
			dst = fmt.Appendf(dst, "    %d %s: %d\n", c.Trap, trapName(c.Trap), c.N)
		}
	}
	return dst
}

func mgmtClassName(c uint8) string {
	if n := decode.MgmtClassString(c); n != "" {
		return n
	}
	return "Reserved"
}

func trapName(n uint16) string {
	if s := decode.TrapString(n); s != "" {
		return s
	}
	return "(vendor or unknown)"
}

// madStatsJSON is the subnet section of the stats JSON: counts by Info
// text ("SubnGet(NodeInfo)"), error statuses by Info text and status, and
// traps by number.
func madStatsJSON(tt *flow.Totals) map[string]any {
	mt := &tt.MADs
	kinds := map[string]uint64{}
	for _, c := range mt.KindCounts() {
		kinds[fmt.Sprintf("0x%02x %s", c.Class, c.MADKey)] += c.N
	}
	st := map[string]uint64{}
	for _, c := range mt.StatusCounts() {
		st[fmt.Sprintf("0x%02x %s status 0x%04x", c.Class, c.MADKey, c.Status)] += c.N
	}
	traps := map[string]uint64{}
	for _, c := range mt.TrapCounts() {
		traps[fmt.Sprint(c.Trap)] = c.N
	}
	return map[string]any{"total": mt.Total, "kinds": kinds, "status_errors": st, "traps": traps}
}
