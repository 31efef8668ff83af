package printer

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/rocetap/rocetap/decode"
	"github.com/rocetap/rocetap/flow"
)

// appendULPSummary appends the Info of a packet of NFS over RDMA, iSER or
// SMB Direct: "NFS COMPOUND SEQUENCE PUTFH READ xid=0x1d94a661 Call",
// "iSER iSCSI Control-Type PDU", "SMB Direct DataMessage"; a data packet
// of an RPC names it ("RDMA WRITE for write chunk of xid=0x..."). Nothing
// when the packet has none. It appends, not concatenates: the TUI's
// index makes it for every iSER and SMB Direct packet.
func appendULPSummary(dst []byte, u *decode.ULPInfo) []byte {
	switch {
	case u.RPC != nil && (u.RPC.HasHdr || u.RPC.HasRPC):
		return u.RPC.AppendSummary(dst)
	case u.RPC != nil && u.RPC.Linked && u.RPC.Chunk != decode.RPCChunkNone:
		dst = append(dst, "RPC "...)
		dst = append(dst, u.RPC.Chunk.String()...)
		dst = append(dst, " chunk of xid="...)
		return decode.AppendHex(dst, uint64(u.RPC.XID), 8)
	case u.ISER != nil:
		return append(append(dst, "iSER "...), decode.ISEROpName(u.ISER.Opcode())...)
	case u.SMBDirect != nil:
		return append(append(dst, "SMB Direct "...), u.SMBDirect.Kind.String()...)
	}
	return dst
}

// AppendRPCStats appends the RPC section of `rocetap stats`: calls by
// procedure and NFSv4 op list with their latency (call to reply) and the
// bytes their chunks moved, the ops of all calls, and what failed.
func AppendRPCStats(dst []byte, st *flow.RPCStats) []byte {
	if st == nil || st.Calls == 0 && st.Orphans == 0 {
		return dst
	}
	dst = fmt.Appendf(dst, "\nRPC over RDMA: %d calls, %d answered, %d failed, %d never answered, %d replies without a call\n",
		st.Calls, st.Replied, st.Errors, st.Unanswered, st.Orphans)
	rows := [][]string{{"procedure", "NFSv4 ops", "calls", "errors", "latency min", "median", "p99", "max", "bytes"}}
	for _, p := range st.ByProc {
		r := []string{p.Procedure, p.Ops, strconv.Itoa(p.Count), strconv.Itoa(p.Errors), "-", "-", "-", "-", strconv.FormatUint(p.Bytes, 10)}
		if p.Latency.N > 0 {
			r[4], r[5], r[6], r[7] = dur(p.Latency.Min), dur(p.Latency.Quantile(0.5)), dur(p.Latency.Quantile(0.99)), dur(p.Latency.Max)
		}
		if r[1] == "" {
			r[1] = "-"
		}
		rows = append(rows, r)
	}
	dst = appendTable(dst, rows)
	dst = appendCounts(dst, "  NFSv4 ops:", st.ByOp)
	return appendCounts(dst, "  errors:", st.ByError)
}

func appendCounts(dst []byte, title string, counts []flow.RPCCount) []byte {
	if len(counts) == 0 {
		return dst
	}
	dst = append(dst, title...)
	for i, c := range counts {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = fmt.Appendf(dst, " %s %d", c.Name, c.Count)
	}
	return append(dst, '\n')
}

// RPCStatsJSON is the "rpc" member of stats -T json.
type RPCStatsJSON struct {
	Calls      int             `json:"calls"`
	Replied    int             `json:"answered"`
	Errors     int             `json:"errors"`
	Unanswered int             `json:"never_answered"`
	Orphans    int             `json:"replies_without_call"`
	ByProc     []RPCProcJSON   `json:"by_procedure"`
	ByOp       []flow.RPCCount `json:"nfs4_ops"`
	ByError    []flow.RPCCount `json:"by_error"`
}

// RPCProcJSON is one procedure of RPCStatsJSON.
type RPCProcJSON struct {
	Procedure string       `json:"procedure"`
	Ops       string       `json:"nfs4_ops,omitempty"`
	Count     int          `json:"calls"`
	Errors    int          `json:"errors"`
	Latency   *LatencyJSON `json:"latency,omitempty"`
	Bytes     uint64       `json:"bytes"`
}

// AppendRPCStatsJSON adds the "rpc" member to the stats object tail
// (StatsJSON's, ending in "\n}\n").
func AppendRPCStatsJSON(tail []byte, st *flow.RPCStats) []byte {
	if st == nil || st.Calls == 0 && st.Orphans == 0 || !bytes.HasSuffix(tail, []byte("\n}\n")) {
		return tail
	}
	j := RPCStatsJSON{Calls: st.Calls, Replied: st.Replied, Errors: st.Errors, Unanswered: st.Unanswered, Orphans: st.Orphans,
		ByOp: st.ByOp, ByError: st.ByError}
	for _, p := range st.ByProc {
		pj := RPCProcJSON{Procedure: p.Procedure, Ops: p.Ops, Count: p.Count, Errors: p.Errors, Bytes: p.Bytes}
		if l := p.Latency; l.N > 0 {
			pj.Latency = &LatencyJSON{l.N, l.Min.Seconds(), l.Quantile(0.5).Seconds(), l.Quantile(0.99).Seconds(), l.Max.Seconds()}
		}
		j.ByProc = append(j.ByProc, pj)
	}
	b, _ := json.MarshalIndent(j, " ", " ")
	out := append([]byte(nil), tail[:len(tail)-3]...)
	out = append(out, ",\n \"rpc\": "...)
	out = append(out, b...)
	return append(out, "\n}\n"...)
}
