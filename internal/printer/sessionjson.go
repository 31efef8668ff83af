package printer

import (
	"bytes"
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/rocetap/rocetap/decode"
	"github.com/rocetap/rocetap/flow"
)

// A session's JSON object is written here, field by field, byte for byte
// as encoding/json writes SessionJSON (Marshal for `sessions -T json`,
// MarshalIndent for `stats -T json`); TestSessionJSONMatchesEncodingJSON
// holds the two to each other. At a million QP pairs, with Marshal and
// MarshalIndent of SessionJSON, `sessions -T json` took 10.2 CPU s and
// `stats -T json` 16.5 (text: 2.9), with 2.6 KB of garbage a session (maps, strings,
// the reflection walk). Parts that only sessions with findings have
// (qp_error, ulp, congestion, merged_ids) still go through
// encoding/json.

// jsonOut appends JSON as encoding/json does: compact as Marshal writes
// it, or, with lines, as MarshalIndent(v, prefix, indent) writes it.
type jsonOut struct {
	b []byte
	// lines[d] starts a line at depth d: a newline, prefix, d indents
	// (jsonLines); nil for compact JSON.
	lines          []string
	prefix, indent string
	depth          int
	empty          bool // the object just opened has no member yet
}

// jsonLines returns the starts of lines of JSON indented with prefix
// and indent, at the depths a session's object has.
func jsonLines(prefix, indent string) []string {
	l := make([]string, 8)
	for d := range l {
		l[d] = "\n" + prefix + strings.Repeat(indent, d)
	}
	return l
}

// statsJSON is how stats -T json indents its sessions.
var statsJSON = jsonOut{lines: jsonLines("  ", " "), prefix: "  ", indent: " "}

// line starts a member's line (indented JSON only).
func (w *jsonOut) line() {
	if w.lines == nil {
		return
	}
	if w.depth < len(w.lines) {
		w.b = append(w.b, w.lines[w.depth]...)
		return
	}
	w.b = append(w.b, '\n')
	w.b = append(w.b, w.prefix...)
	for range w.depth {
		w.b = append(w.b, w.indent...)
	}
}

func (w *jsonOut) open() {
	w.b = append(w.b, '{')
	w.depth++
	w.empty = true
}

// close ends the object; an empty one stays "{}", as encoding/json
// writes it.
func (w *jsonOut) close() {
	w.depth--
	if !w.empty {
		w.line()
	}
	w.b = append(w.b, '}')
	w.empty = false
}

// key starts a member named k (a name that needs no escaping).
func (w *jsonOut) key(k string) {
	if !w.empty {
		w.b = append(w.b, ',')
	}
	w.empty = false
	w.line()
	w.b = append(w.b, '"')
	w.b = append(w.b, k...)
	if w.lines != nil {
		w.b = append(w.b, '"', ':', ' ')
	} else {
		w.b = append(w.b, '"', ':')
	}
}

func (w *jsonOut) uint(v uint64) { w.b = decode.AppendUint(w.b, v) }

func (w *jsonOut) bool(v bool) { w.b = strconv.AppendBool(w.b, v) }

// float writes f as encoding/json does (ES6 number formatting); a NaN or
// an infinity, which it refuses, as null.
func (w *jsonOut) float(f float64) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		w.b = append(w.b, "null"...)
		return
	}
	format := byte('f')
	if a := math.Abs(f); a != 0 && (a < 1e-6 || a >= 1e21) {
		format = 'e'
	}
	w.b = strconv.AppendFloat(w.b, f, format, -1, 64)
	if format == 'e' { // e-07 → e-7, as encoding/json writes it
		if n := len(w.b); n >= 4 && w.b[n-4] == 'e' && w.b[n-3] == '-' && w.b[n-2] == '0' {
			w.b[n-2] = w.b[n-1]
			w.b = w.b[:n-1]
		}
	}
}

// str writes s quoted; a string with a byte encoding/json escapes goes
// through it.
func (w *jsonOut) str(s string) {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			b, _ := json.Marshal(s)
			w.b = append(w.b, b...)
			return
		}
	}
	w.b = append(w.b, '"')
	w.b = append(w.b, s...)
	w.b = append(w.b, '"')
}

// hex writes v quoted as "0x" and at least width hex digits.
func (w *jsonOut) hex(v uint64, width int) {
	w.b = append(decode.AppendHex(append(w.b, '"'), v, width), '"')
}

// seconds writes ns nanoseconds quoted as seconds with prec decimals.
func (w *jsonOut) seconds(ns int64, prec int) {
	w.b = append(decode.AppendSeconds(append(w.b, '"'), ns, prec), '"')
}

// value writes v through encoding/json, indented to where it stands.
func (w *jsonOut) value(v any) {
	b, err := json.Marshal(v)
	if err != nil {
		w.b = append(w.b, "null"...)
		return
	}
	if w.lines == nil {
		w.b = append(w.b, b...)
		return
	}
	buf := bytes.NewBuffer(w.b)
	_ = json.Indent(buf, b, w.prefix+strings.Repeat(w.indent, w.depth), w.indent)
	w.b = buf.Bytes()
}

// The kinds of message, and the NAK and RNR NAK codes, in the order of
// their names: encoding/json writes a map's keys sorted.
var (
	kindsByName = func() []decode.MsgKind {
		var ks []decode.MsgKind
		for k := decode.MsgKind(1); k < decode.NumMsgKinds; k++ {
			ks = append(ks, k)
		}
		slices.SortFunc(ks, func(a, b decode.MsgKind) int { return strings.Compare(a.String(), b.String()) })
		return ks
	}()
	nakCodesByName = syndromeCodesByName(0x60)
	rnrCodesByName = syndromeCodesByName(0x20)
)

func syndromeCodesByName(base uint8) []uint8 {
	codes := make([]uint8, 32)
	for i := range codes {
		codes[i] = uint8(i)
	}
	slices.SortFunc(codes, func(a, b uint8) int {
		return strings.Compare(decode.SyndromeString(base|a), decode.SyndromeString(base|b))
	})
	return codes
}

func (w *jsonOut) endpoint(e flow.Endpoint) {
	w.open()
	w.key("addr")
	w.b = append(e.AppendNode(append(w.b, '"')), '"')
	w.key("qpn")
	if e.QPNKnown {
		w.hex(uint64(e.QPN), 6)
	} else {
		w.b = append(w.b, "null"...)
	}
	if e.HasStart {
		w.key("start_psn")
		w.uint(uint64(e.StartPSN))
	}
	w.close()
}

func (w *jsonOut) dirStats(d *flow.DirStats, responses uint64) {
	w.open()
	w.key("packets")
	w.uint(d.Packets)
	w.key("bytes")
	w.uint(d.Bytes)
	w.key("payload_bytes")
	w.uint(d.PayloadBytes)
	w.key("requests")
	w.uint(d.Requests)
	w.key("responses")
	w.uint(responses)
	w.close()
}

// syndromes writes counts by NAK code as an object keyed by the
// syndromes' names (base|code), those not zero.
func (w *jsonOut) syndromes(counts *[32]uint64, base uint8, order []uint8) {
	w.open()
	for _, c := range order {
		if n := counts[c]; n > 0 {
			w.key(decode.SyndromeString(base | c))
			w.uint(n)
		}
	}
	w.close()
}

func (w *jsonOut) count(name string, v uint64) {
	w.key(name)
	w.uint(v)
}

// session writes s as SessionJSON, its members in their order (the
// test's sessionToJSON is the mapping it follows).
func (w *jsonOut) session(s *flow.Session, start time.Time) {
	f := s.Findings()
	w.open()
	w.count("id", uint64(s.ID))
	if m := s.Merged(); len(m) > 0 {
		w.key("merged_ids")
		w.value(m)
	}
	w.key("transport")
	w.str(s.Transport.String())
	w.key("paired_by")
	w.str(s.Learned.String())
	w.key("a")
	w.endpoint(s.A)
	w.key("b")
	w.endpoint(s.B)
	if s.Transport == decode.TransportUD {
		w.key("q_key")
		w.hex(uint64(s.QKey()), 8)
	}
	w.count("mtu", uint64(s.MTU))
	if m := s.MTUFrom(); m != "" {
		w.key("mtu_from")
		w.str(m)
	}
	w.key("closed")
	w.bool(s.Closed)
	w.key("start")
	w.seconds(int64(s.First().Sub(start)), 6)
	w.key("duration")
	w.seconds(int64(s.Duration()), 9)
	w.key("throughput_bps")
	w.float(s.Throughput())
	w.key("sent_by_a")
	w.dirStats(&s.Sent[0], s.Responses(0))
	w.key("sent_by_b")
	w.dirStats(&s.Sent[1], s.Responses(1))
	w.key("messages")
	w.open()
	for _, k := range kindsByName {
		if n := s.Messages(k); n > 0 {
			w.key(k.String())
			w.open()
			w.count("count", n)
			w.count("bytes", s.MessageBytes(k))
			w.close()
		}
	}
	w.close()
	w.count("partial_messages", f.Partial)
	w.key("naks")
	w.syndromes(&f.NAKs, 0x60, nakCodesByName)
	w.key("rnr_naks")
	w.syndromes(&f.RNRNaks, 0x20, rnrCodesByName)
	w.count("psn_gaps", f.Gaps)
	w.count("lost_psns", f.LostPSNs)
	w.count("retransmissions", f.Retransmitted)
	w.count("duplicates", f.Duplicates)
	w.count("out_of_order", f.OutOfOrder)
	w.count("unmatched_responses", f.Unmatched)
	w.count("opcode_sequence_errors", f.OpcodeSeq)
	w.count("unanswered_requests", f.NoResponse)
	w.count("cnps", f.CNPs)
	w.count("ecn_ce", f.ECNCE)
	w.count("icrc_errors", f.ICRCErrors)
	w.count("truncated", f.Truncated)
	lat := false
	for _, k := range kindsByName {
		l := s.Latency(k)
		if l.N == 0 {
			continue
		}
		if !lat {
			lat = true
			w.key("latency")
			w.open()
		}
		w.key(k.String())
		w.open()
		w.count("count", l.N)
		w.key("min")
		w.float(l.Min.Seconds())
		w.key("median")
		w.float(l.Quantile(0.5).Seconds())
		w.key("p99")
		w.float(l.Quantile(0.99).Seconds())
		w.key("max")
		w.float(l.Max.Seconds())
		w.close()
	}
	if lat {
		w.close()
	}
	if f.MPTChecked > 0 {
		w.key("mpt")
		w.open()
		w.count("checked", f.MPTChecked)
		w.count("violations", f.MPTViolations)
		w.count("accepted", f.MPTAccepted)
		w.count("rejected", f.MPTRejected)
		w.close()
	}
	if q := qpErrorsJSON(s); len(q) > 0 {
		w.key("qp_error")
		w.value(q)
	}
	if u := ulpJSON(s.ULP()); u != nil {
		w.key("ulp")
		w.value(u)
	}
	if c := congestionJSON(s); len(c) > 0 {
		w.key("congestion")
		w.value(c)
	}
	w.close()
}
