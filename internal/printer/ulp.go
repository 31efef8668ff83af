package printer

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/rocetap/rocetap/decode"
	"github.com/rocetap/rocetap/flow"
)

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
		if s := appendULPSummary(append(dst, " | "...), u); len(s) > len(dst)+len(" | ") {
			return s
		}
	}
	return dst
}

// ULPJSON is the upper-layer protocol of a session (sessions -T json).
type ULPJSON struct {
	Protocol  string  `json:"protocol"`   // Wireshark's name: nvme-rdma, rpcordma, iser, smb_direct
	LearnedBy string  `json:"learned_by"` // cm or decode-as
	NVMeQueue *uint16 `json:"nvme_queue,omitempty"`
}

func ulpJSON(c *flow.ULPConn) *ULPJSON {
	if c == nil {
		return nil
	}
	j := &ULPJSON{Protocol: c.ULP.String(), LearnedBy: c.Learned}
	if c.ULP == decode.ULPNVMe {
		if q, ok := flow.NVMeQueue(c); ok {
			j.NVMeQueue = &q
		}
	}
	return j
}

// AppendNVMeStats appends the NVMe-oF section of rocetap stats: commands
// by queue kind and opcode with latency and bytes, commands per queue,
// bytes by direction, completions by status.
func AppendNVMeStats(dst []byte, st *flow.NVMeStats) []byte {
	if st == nil || st.Commands == 0 && st.Orphans == 0 {
		return dst
	}
	dst = fmt.Appendf(dst, "\nNVMe-oF: %d commands, %d completed, %d with an error status, %d completions without a command\n",
		st.Commands, st.Completed, st.Errors, st.Orphans)
	rows := [][]string{{"queue", "command", "count", "latency min", "median", "p99", "max", "bytes"}}
	for _, o := range st.ByOp {
		r := []string{o.Queue, o.Name, strconv.Itoa(o.Count), "-", "-", "-", "-", strconv.FormatUint(o.Bytes, 10)}
		if o.Latency.N > 0 {
			r[3], r[4], r[5], r[6] = dur(o.Latency.Min), dur(o.Latency.Quantile(0.5)), dur(o.Latency.Quantile(0.99)), dur(o.Latency.Max)
		}
		rows = append(rows, r)
	}
	dst = appendTable(dst, rows)
	dst = append(dst, "  per queue (commands, queue depth max/mean):"...)
	for _, q := range st.ByQueue {
		dst = fmt.Appendf(dst, " #%d", q.Session)
		if q.HasQID {
			dst = fmt.Appendf(dst, " q%d", q.QID)
		}
		dst = fmt.Appendf(dst, " %d %d/%.2f;", q.Commands, q.MaxDepth, q.MeanDepth)
	}
	dst = dst[:len(dst)-1]
	dst = fmt.Appendf(dst, "\n  data: %d bytes to the host (RDMA WRITE), %d from the host (RDMA READ), %d in capsules\n", st.ToHost, st.FromHost, st.InCapsule)
	dst = append(dst, "  completions:"...)
	for i, s := range st.Status {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = fmt.Appendf(dst, " %s %d", s.Status, s.Count)
	}
	return append(dst, '\n')
}

// appendTable appends rows as right-aligned columns (the first two left),
// two spaces apart, indented by two.
func appendTable(dst []byte, rows [][]string) []byte {
	var w []int
	for _, r := range rows {
		for i, c := range r {
			if i >= len(w) {
				w = append(w, 0)
			}
			w[i] = max(w[i], utf8.RuneCountInString(c))
		}
	}
	for _, r := range rows {
		dst = append(dst, "  "...)
		for i, c := range r {
			pad := strings.Repeat(" ", w[i]-utf8.RuneCountInString(c))
			if i < 2 {
				dst = append(append(dst, c...), pad...)
			} else {
				dst = append(append(dst, pad...), c...)
			}
			if i < len(r)-1 {
				dst = append(dst, "  "...)
			}
		}
		dst = append(dst, '\n')
	}
	return dst
}

// NVMeStatsJSON is the "nvme" member of stats -T json.
type NVMeStatsJSON struct {
	Commands  int                    `json:"commands"`
	Completed int                    `json:"completed"`
	Errors    int                    `json:"errors"`
	Orphans   int                    `json:"completions_without_command"`
	ByOpcode  []NVMeOpJSON           `json:"by_opcode"`
	ByQueue   []flow.NVMeQueueStats  `json:"by_queue"`
	ToHost    uint64                 `json:"bytes_to_host"`
	FromHost  uint64                 `json:"bytes_from_host"`
	InCapsule uint64                 `json:"bytes_in_capsules"`
	Status    []flow.NVMeStatusCount `json:"status"`
}

// NVMeOpJSON is one opcode of NVMeStatsJSON.
type NVMeOpJSON struct {
	Queue   string       `json:"queue"`
	Name    string       `json:"command"`
	Count   int          `json:"count"`
	Latency *LatencyJSON `json:"latency,omitempty"`
	Bytes   uint64       `json:"bytes"`
}

// AppendNVMeStatsJSON inserts the "nvme" member into the end of the stats
// JSON object (tail, as StatsJSON returns it, ends with "\n}\n").
func AppendNVMeStatsJSON(tail []byte, st *flow.NVMeStats) []byte {
	if st == nil || st.Commands == 0 && st.Orphans == 0 || !bytes.HasSuffix(tail, []byte("\n}\n")) {
		return tail
	}
	j := NVMeStatsJSON{Commands: st.Commands, Completed: st.Completed, Errors: st.Errors, Orphans: st.Orphans, ByQueue: st.ByQueue,
		ToHost: st.ToHost, FromHost: st.FromHost, InCapsule: st.InCapsule, Status: st.Status}
	for _, o := range st.ByOp {
		oj := NVMeOpJSON{Queue: o.Queue, Name: o.Name, Count: o.Count, Bytes: o.Bytes}
		if l := o.Latency; l.N > 0 {
			oj.Latency = &LatencyJSON{l.N, l.Min.Seconds(), l.Quantile(0.5).Seconds(), l.Quantile(0.99).Seconds(), l.Max.Seconds()}
		}
		j.ByOpcode = append(j.ByOpcode, oj)
	}
	b, _ := json.MarshalIndent(j, " ", " ")
	out := append([]byte(nil), tail[:len(tail)-3]...)
	out = append(out, ",\n \"nvme\": "...)
	out = append(out, b...)
	return append(out, "\n}\n"...)
}

// Duration formats a latency as the reports do ("79.9µs", "1.177ms").
func Duration(d time.Duration) string { return dur(d) }
