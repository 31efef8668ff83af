package flow_test

// TestRXE checks the tracker against the ground truth recorded with the real
// Soft-RoCE captures of testdata/rxe (see testdata/rxe/README.md):
//
//   - rxe_scen scenarios: <s>.expect.json lists every QP (with its first
//     PSNs) and every work request in posting order, with the PSN it was
//     given and the status the application saw;
//   - perftest scenarios (pt_*): <s>.mpt.json gives the responder QPs, the
//     requester QPN each was connected to and the requester's first PSN;
//     gtPerftest below holds the README's runs (iterations x sizes);
//   - rdma_cm scenarios (cm_*): the REQ/REP (or SIDR REQ/REP) inside the
//     capture carry the QPNs and start PSNs; gtCM below holds what the tools
//     send (README table and the tools' protocols);
//   - tshark_summary.txt gives, per capture, tshark's own frame, opcode,
//     AETH syndrome and CM MAD counts (the README's table was taken from an
//     earlier run for err_rnr_recover and cm_perftest; the summary matches
//     the captures stored here).
//
// Every capture in testdata/rxe must have ground truth: a capture added
// without it fails the test with a message saying what to add.
//
// Per capture it checks:
//
//  1. the sessions: exactly the QP pairs (RC/UC: A = requester, B =
//     responder, QPNs, how the pair was learned, A's first PSN; CM: the
//     REQ/REP QPNs and start PSNs, CommID, MTU, closed by a DREQ) and UD
//     flows (source QP, destination QP, Q_Key), nothing else;
//  2. the messages, in order per session and direction: kind, length,
//     first PSN, packets, NAKed, never partial; the payloads of their
//     packets add up; the session's Messages/MessageBytes/Latency counts;
//     the rocetap.msg.* analysis of the packet that completes each one;
//  3. NAKs by code and RNR NAKs by timer (tshark's counts), retransmissions
//     (with their original frame and cause), requests never answered, and
//     no false alarm (duplicates, out-of-order, gaps, opcode sequence,
//     unmatched responses, mid-stream, partial messages); every expert
//     event is also in its frame's analysis; per-direction packet counts;
//  4. every response points at a request frame of its session whose PSNs
//     cover the response's PSN, with the RTT since that frame, and a
//     positive response lists that frame in Acked.

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rocetap/rocetap/capture"
	"github.com/rocetap/rocetap/decode"
	"github.com/rocetap/rocetap/flow"
)

const (
	gtDir = "../testdata/rxe"
	// gtMTU is the active MTU of both rxe devices (README: "Active MTU
	// 1024"; every expect.json has active_mtu 1024 and every QP path_mtu
	// 1024).
	gtMTU = 1024
	// gtRequesterIP is rxe0, the requester of every rxe_scen and perftest
	// run (README "Addresses"); the pt_ud MPT names no remote.
	gtRequesterIP = "10.77.0.1"
	// gtMADQKey is the well-known Q_Key of QP1 (GSI) datagrams.
	gtMADQKey = 0x80010000
	gtMADLen  = 256
)

// ---------------------------------------------------------------------------
// Ground truth not in a JSON companion.

// gtPerftestRun is one perftest run: the responder QP of the run is the
// run's entry in <s>.mpt.json (same order).
type gtPerftestRun struct {
	kind  decode.MsgKind
	size  uint64
	iters int
}

// gtPerftest holds the README's "what" column for the perftest captures.
var gtPerftest = map[string][]gtPerftestRun{
	// ib_write_bw -c RC -s 64/1024/5000, 5 iterations each (3 connections)
	"pt_write": {{decode.MsgWrite, 64, 5}, {decode.MsgWrite, 1024, 5}, {decode.MsgWrite, 5000, 5}},
	// ib_read_bw -s 64 and -s 3000, 5 iterations each
	"pt_read": {{decode.MsgRead, 64, 5}, {decode.MsgRead, 3000, 5}},
	// ib_send_bw -c RC -s 64 and -s 3000, 5 iterations each
	"pt_send": {{decode.MsgSend, 64, 5}, {decode.MsgSend, 3000, 5}},
	// ib_atomic_bw -A CMP_AND_SWAP and -A FETCH_AND_ADD, 5 each
	"pt_atomic": {{decode.MsgAtomic, 8, 5}, {decode.MsgAtomic, 8, 5}},
	// ib_send_bw -c UC and ib_write_bw -c UC, -s 2000, 5 each
	"pt_uc": {{decode.MsgSend, 2000, 5}, {decode.MsgWrite, 2000, 5}},
	// ib_send_bw -c UD -s 512, 5 iterations
	"pt_ud": {{decode.MsgSend, 512, 5}},
}

// gtMsgSpec is n messages of one kind and length (-1: not known from the
// metadata; such messages are small, one packet each).
type gtMsgSpec struct {
	kind   decode.MsgKind
	length int64
	n      int
}

// gtCMConn is one rdma_cm connection (in REQ order): what the active side
// (the REQ sender, session side A) and the passive side send, in order.
type gtCMConn struct {
	active, passive []gtMsgSpec
}

// gtUDFlow is a UD data flow besides the QP1 MADs.
type gtUDFlow struct {
	src, dst     string
	srcQP, dstQP uint32 // 0: the QPN of the SIDR REP
	qkey         uint32 // 0: the Q_Key of the SIDR REP
	msgs         []gtMsgSpec
}

type gtCMScenario struct {
	conns []gtCMConn
	ud    []gtUDFlow
}

func gtRepeat(n int, s ...gtMsgSpec) []gtMsgSpec {
	var out []gtMsgSpec
	for range n {
		out = append(out, s...)
	}
	return out
}

// gtCM holds the rdma_cm captures: which connections the REQ/REPs set up
// and what each side sends on them. The QPNs and start PSNs come from the
// REQ/REP in the capture.
var gtCM = map[string]gtCMScenario{
	// rping -C 2 -S 64: per iteration the client SENDs its buffer info
	// (struct rping_rdma_info, 16 B), the server READs 64 B from it and
	// SENDs a go-ahead, the client SENDs the info of its sink buffer and
	// the server WRITEs 64 B there and SENDs again. README: 8 SEND Only,
	// 2 WRITE Only, 2 READ Request.
	"cm_rping": {conns: []gtCMConn{{
		active: gtRepeat(4, gtMsgSpec{decode.MsgSend, 16, 1}),
		passive: gtRepeat(2,
			gtMsgSpec{decode.MsgRead, 64, 1}, gtMsgSpec{decode.MsgSend, 16, 1},
			gtMsgSpec{decode.MsgWrite, 64, 1}, gtMsgSpec{decode.MsgSend, 16, 1}),
	}}},
	// ib_send_bw -R -s 128 -n 5: connection 1 carries perftest's control
	// exchange (11 small SENDs each way), connection 2 the 5 data SENDs of
	// 128 B (27 SEND Only in all).
	"cm_perftest": {conns: []gtCMConn{
		{active: []gtMsgSpec{{decode.MsgSend, -1, 11}}, passive: []gtMsgSpec{{decode.MsgSend, -1, 11}}},
		{active: []gtMsgSpec{{decode.MsgSend, 128, 5}}},
	}},
	// ucmatose -c 1 -C 2 -S 100: each side SENDs 2 messages of 100 B.
	"cm_ucmatose": {conns: []gtCMConn{{
		active:  []gtMsgSpec{{decode.MsgSend, 100, 2}},
		passive: []gtMsgSpec{{decode.MsgSend, 100, 2}},
	}}},
	// udaddy -c 1 -C 2 -S 100: SIDR REQ/REP resolves the server's UD QP
	// and Q_Key, then each side sends 2 datagrams of 100 B with immediate.
	// The client's QP (0x29) is in no CM message; the capture shows it.
	"cm_udaddy": {ud: []gtUDFlow{
		{src: "10.77.0.1", dst: "10.77.0.2", srcQP: 0x29, msgs: []gtMsgSpec{{decode.MsgSendImm, 100, 2}}},
		{src: "10.77.0.2", dst: "10.77.0.1", dstQP: 0x29, msgs: []gtMsgSpec{{decode.MsgSendImm, 100, 2}}},
	}},
	// rping -c to a port with no listener: REQ, REJ; no connection.
	"cm_reject": {},
}

// gtNAKedWRs are the WRs a NAK stopped part-way: scenario -> wr_id ->
// packets that reached the wire (README: err_write_oob_multi "NAK on
// WRITE_FIRST, rest never sent"; err_recv_too_small "SEND_FIRST, NAK 0x63
// (the SEND_LAST is never sent)").
var gtNAKedWRs = map[string]map[int]uint32{
	"err_write_oob_multi": {1: 1},
	"err_recv_too_small":  {4: 1},
}

// gtWrongQKey are UD WRs sent with another Q_Key than their QP's
// (expect.json says so only in "what"; the value is the one in the
// capture): scenario -> wr_id -> Q_Key.
var gtWrongQKey = map[string]map[int]uint32{
	"ud_imm": {11: 0x22222222},
}

// gtErrors are the README's retransmissions and unanswered requests
// ("Error scenarios" table); every other capture has none.
var gtErrors = map[string]struct {
	retrans    uint64
	perRNR     bool // one retransmission per RNR NAK (their count depends on timing)
	noResponse uint64
}{
	"err_rnr":         {retrans: 2},                // 3 tries of the same SEND, 3 RNR NAKs, RNR_RETRY_EXC
	"err_rnr_recover": {perRNR: true},              // a retry after each RNR NAK, then ACK
	"err_psn_seq":     {retrans: 2, noResponse: 1}, // 2 silent retransmissions, RETRY_EXC
	"err_retry_exc":   {retrans: 3, noResponse: 1}, // 1 + 3 identical WRITEs, no response
}

// gtWRKinds maps expect.json opcodes to message kinds; "" sends nothing.
var gtWRKinds = map[string]decode.MsgKind{
	"RDMA_WRITE":           decode.MsgWrite,
	"RDMA_WRITE_WITH_IMM":  decode.MsgWriteImm,
	"SEND":                 decode.MsgSend,
	"SEND_WITH_IMM":        decode.MsgSendImm,
	"SEND_WITH_INV":        decode.MsgSendInv,
	"RDMA_READ":            decode.MsgRead,
	"ATOMIC_FETCH_AND_ADD": decode.MsgAtomic,
	"ATOMIC_CMP_AND_SWP":   decode.MsgAtomic,
	"BIND_MW":              decode.MsgNone, // a local operation: no packet
}

// ---------------------------------------------------------------------------
// Metadata files.

type gtExpectFile struct {
	Scenario  string   `json:"scenario"`
	ActiveMTU uint32   `json:"active_mtu"`
	QPs       []gtQP   `json:"qps"`
	WRs       []gtWRec `json:"work_requests"`
}

type gtQP struct {
	Side    string     `json:"side"`
	Type    string     `json:"type"`
	QPN     uint32     `json:"qpn"`
	IP      string     `json:"ip"`
	SQPSN   decode.PSN `json:"sq_psn"`
	RQPSN   decode.PSN `json:"rq_psn"`
	DestQPN uint32     `json:"dest_qpn"`
	PathMTU uint32     `json:"path_mtu"`
	QKey    uint32     `json:"q_key"`
	State   string     `json:"state"`
}

type gtWRec struct {
	WRID     int     `json:"wr_id"`
	Side     string  `json:"side"`
	QPN      uint32  `json:"qpn"`
	QPType   string  `json:"qp_type"`
	Opcode   string  `json:"opcode"`
	What     string  `json:"what"`
	Length   *uint64 `json:"length"`
	DestQPN  uint32  `json:"dest_qpn"`
	PSNFirst *uint32 `json:"psn_first"`
	NPkts    uint32  `json:"npkts_nominal"`
	Status   string  `json:"status"`
}

type gtMPTFile struct {
	Responder struct {
		Address string `json:"address"`
	} `json:"responder"`
	QPs []struct {
		QPN         string `json:"qpn"`
		Type        string `json:"type"`
		MTU         uint32 `json:"mtu"`
		ExpectedPSN string `json:"expected_psn"`
		QKey        string `json:"q_key"`
		Remote      *struct {
			Address string `json:"address"`
			QPN     string `json:"qpn"`
		} `json:"remote"`
	} `json:"qps"`
}

// gtSummary is one capture's section of tshark_summary.txt.
type gtSummary struct {
	packets   int
	opcodes   map[int]uint64
	syndromes map[int]uint64
	cm        map[int]uint64
}

func gtReadSummary(t *testing.T) map[string]*gtSummary {
	t.Helper()
	f, err := os.Open(filepath.Join(gtDir, "tshark_summary.txt"))
	if err != nil {
		t.Fatalf("tshark_summary.txt: %v", err)
	}
	defer f.Close()
	out := map[string]*gtSummary{}
	var cur *gtSummary
	sc := bufio.NewScanner(f)
	num := func(s string) int {
		v, err := strconv.ParseInt(s, 0, 64)
		if err != nil {
			t.Fatalf("tshark_summary.txt: bad number %q in %q", s, sc.Text())
		}
		return int(v)
	}
	for sc.Scan() {
		line := sc.Text()
		fs := strings.Fields(line)
		switch {
		case strings.HasPrefix(line, "=== "):
			// === cm_perftest.pcap: 64 packets, dest QPs ...
			name := strings.TrimSuffix(strings.TrimSuffix(fs[1], ":"), ".pcap")
			cur = &gtSummary{packets: num(fs[2]), opcodes: map[int]uint64{}, syndromes: map[int]uint64{}, cm: map[int]uint64{}}
			out[name] = cur
		case cur == nil || len(fs) < 3:
		case fs[0] == "opcode":
			cur.opcodes[num(fs[1])] += uint64(num(fs[len(fs)-1]))
		case fs[0] == "AETH" && fs[1] == "syndrome":
			cur.syndromes[num(fs[2])] += uint64(num(fs[len(fs)-1]))
		case len(fs) > 4 && fs[0] == "CM" && fs[1] == "MAD" && fs[2] == "attr":
			cur.cm[num(fs[3])] += uint64(num(fs[len(fs)-1]))
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func gtReadJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

func gtHex(t *testing.T, what, s string) uint32 {
	t.Helper()
	v, err := strconv.ParseUint(s, 0, 32)
	if err != nil {
		t.Fatalf("%s: bad value %q: %v", what, s, err)
	}
	return uint32(v)
}

func gtAddr(t *testing.T, s string) netip.Addr {
	t.Helper()
	a, err := netip.ParseAddr(s)
	if err != nil {
		t.Fatalf("bad address %q: %v", s, err)
	}
	return a
}

// ---------------------------------------------------------------------------
// The capture, decoded and tracked.

// gtPkt is what the test keeps of one frame.
type gtPkt struct {
	frame    int
	at       time.Time
	length   int
	ib       bool
	op       decode.Opcode
	psn      decode.PSN
	destQP   uint32
	src, dst netip.Addr
	deth     bool
	srcQP    uint32
	qkey     uint32
	payload  int
	dmaLen   uint32
	aeth     bool
	syndrome uint8
	cm       bool
	c        decode.CM
	an       decode.Analysis
}

type gtRun struct {
	pkts     []gtPkt
	msgs     []flow.Message
	evs      []flow.Event
	tr       *flow.Tracker
	sessions []*flow.Session
}

func gtTrack(t *testing.T, path string) *gtRun {
	t.Helper()
	r, err := capture.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	run := &gtRun{}
	run.tr = flow.New(flow.Options{
		OnMessage: func(m *flow.Message) { run.msgs = append(run.msgs, *m) },
		OnEvent:   func(e *flow.Event) { run.evs = append(run.evs, *e) },
	})
	dec := decode.NewDecoder()
	p := new(decode.Packet)
	for n := 1; ; n++ {
		data, info, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("%s: frame %d: %v", path, n, err)
		}
		p.Frame = decode.Frame{Number: n, Time: info.Timestamp, Len: info.Length}
		dec.Decode(p, data, info.LinkType)
		run.tr.Track(p)
		g := gtPkt{frame: n, at: info.Timestamp, length: info.Length, an: p.Analysis}
		g.an.Acked = append([]int(nil), p.Analysis.Acked...)
		switch {
		case p.Has&decode.HdrIPv4 != 0:
			g.src, g.dst = netip.AddrFrom4(p.IPv4.Src), netip.AddrFrom4(p.IPv4.Dst)
		case p.Has&decode.HdrIPv6 != 0:
			g.src, g.dst = netip.AddrFrom16(p.IPv6.Src), netip.AddrFrom16(p.IPv6.Dst)
		}
		if p.Has&decode.HdrBTH != 0 {
			g.ib, g.op, g.psn, g.destQP = true, p.BTH.Opcode, p.BTH.PSN, p.BTH.DestQP
			g.payload = len(p.Payload)
		}
		if p.Has&decode.HdrDETH != 0 {
			g.deth, g.srcQP, g.qkey = true, p.DETH.SrcQP, p.DETH.QKey
		}
		if p.Has&decode.HdrRETH != 0 {
			g.dmaLen = p.RETH.DMALen
		}
		if p.Has&decode.HdrAETH != 0 {
			g.aeth, g.syndrome = true, p.AETH.Syndrome
		}
		if p.Has&decode.HdrCM != 0 {
			g.cm, g.c = true, p.CM
			g.c.Link = nil
		}
		run.pkts = append(run.pkts, g)
	}
	run.tr.Flush()
	run.sessions = run.tr.Sessions()
	return run
}

// resolve maps a session ID and direction recorded before a merge to the
// session that absorbed the provisional one (its side A became side B).
func (r *gtRun) resolve(id uint32, dir decode.Direction) (uint32, decode.Direction) {
	for range 4 {
		s := r.tr.Session(id)
		if s == nil || s.MergedInto() == 0 {
			break
		}
		id, dir = s.MergedInto(), 1-dir
	}
	return id, dir
}

// ---------------------------------------------------------------------------
// What the tracker must find.

type gtMsg struct {
	dir    decode.Direction
	kind   decode.MsgKind
	length int64 // -1: not known
	psn    decode.PSN
	hasPSN bool
	pkts   uint32 // 0: not checked (READ, ATOMIC, unknown length)
	naked  bool
	ok     bool // RC: a response completes it successfully (its latency counts)
	what   string
}

func (m gtMsg) String() string {
	s := m.kind.String()
	if m.length >= 0 {
		s += " " + strconv.FormatInt(m.length, 10) + " B"
	}
	if m.hasPSN {
		s += fmt.Sprintf(" PSN %d", m.psn)
	}
	if m.pkts != 0 {
		s += fmt.Sprintf(" %d pkt", m.pkts)
	}
	if m.naked {
		s += " NAKed"
	}
	if m.what != "" {
		s += " (" + m.what + ")"
	}
	return s
}

func gtGotString(m flow.Message) string {
	s := fmt.Sprintf("%s %d B PSN %d %d pkt frames %d-%d", m.Kind, m.Length, m.PSN, m.Packets, m.FirstFrame, m.LastFrame)
	if m.NAKed {
		s += " NAKed"
	}
	if m.Partial {
		s += " partial"
	}
	return s
}

type gtSession struct {
	what      string
	transport string
	learned   decode.Pairing
	a, b      netip.Addr
	aQPN      uint32
	aKnown    bool // A.QPN must be known and equal aQPN
	bQPN      uint32
	aStart    decode.PSN
	hasAStart bool
	bStart    decode.PSN
	hasBStart bool
	qkey      uint32
	msgs      []gtMsg
	// CM connections
	cm     bool
	commID uint32 // the REQ's Local Communication ID
	closed bool   // a DREQ for it is in the capture
}

// match reports whether tracker session s is the one w describes.
func (w *gtSession) match(s *flow.Session) bool {
	if s.Transport.String() != w.transport || s.A.Addr().Unmap() != w.a || s.B.Addr().Unmap() != w.b || s.B.QPN != w.bQPN {
		return false
	}
	if w.transport == "UD" {
		return s.QKey() == w.qkey && (!w.aKnown || s.A.QPN == w.aQPN)
	}
	return true
}

type gtCase struct {
	name     string
	sum      *gtSummary
	sessions []*gtSession
	retrans  uint64
	noResp   uint64
	naks     [32]uint64
	rnrs     [32]uint64
	mtu      uint32
}

// span is the PSNs a message consumes.
func gtSpan(kind decode.MsgKind, length uint64, mtu uint32) uint32 {
	if kind == decode.MsgAtomic || length == 0 {
		return 1
	}
	return uint32((length + uint64(mtu) - 1) / uint64(mtu))
}

// addSpecs appends the messages of specs sent in direction dir from PSN
// start (hasPSN false: PSNs not checked).
func gtAddSpecs(msgs []gtMsg, specs []gtMsgSpec, dir decode.Direction, start decode.PSN, hasPSN, ok bool, mtu uint32, what string) []gtMsg {
	psn, i := start, 0
	for _, sp := range specs {
		for range sp.n {
			i++
			m := gtMsg{dir: dir, kind: sp.kind, length: sp.length, psn: psn, hasPSN: hasPSN, ok: ok,
				what: fmt.Sprintf("%s #%d", what, i)}
			l := uint64(max(sp.length, 0))
			n := gtSpan(sp.kind, l, mtu)
			if sp.kind != decode.MsgRead && sp.kind != decode.MsgAtomic && sp.length >= 0 {
				m.pkts = n
			}
			psn = psn.Add(int(n))
			msgs = append(msgs, m)
		}
	}
	return msgs
}

// gtFromExpect builds the ground truth of an rxe_scen capture.
func gtFromExpect(t *testing.T, name string, run *gtRun) *gtCase {
	var ex gtExpectFile
	gtReadJSON(t, filepath.Join(gtDir, name+".expect.json"), &ex)
	c := &gtCase{name: name, mtu: ex.ActiveMTU}
	if c.mtu == 0 {
		c.mtu = gtMTU
	}
	responder := func(req gtQP, qpn uint32) *gtQP {
		for i := range ex.QPs {
			q := &ex.QPs[i]
			if q.Side == "responder" && q.Type == req.Type && q.QPN == qpn {
				return q
			}
		}
		t.Fatalf("%s.expect.json: no responder %s QP %#08x for requester QP %#08x", name, req.Type, qpn, req.QPN)
		return nil
	}
	// does the responder answer at all (err_retry_exc: its QP is in INIT)?
	answered := func(req gtQP) bool {
		a := gtAddr(t, req.IP)
		for _, p := range run.pkts {
			if p.ib && p.op.IsResponse() && p.dst == a && p.destQP == req.QPN {
				return true
			}
		}
		return false
	}
	for _, w := range ex.WRs {
		if _, ok := gtWRKinds[w.Opcode]; !ok {
			t.Fatalf("%s.expect.json: wr_id %d has opcode %q: add it to gtWRKinds in flow/rxe_test.go", name, w.WRID, w.Opcode)
		}
	}
	for _, q := range ex.QPs {
		if q.Side != "requester" {
			continue
		}
		if q.PathMTU != 0 && q.PathMTU != c.mtu {
			t.Fatalf("%s: QP %#08x path_mtu %d, active_mtu %d: the test assumes one MTU per capture", name, q.QPN, q.PathMTU, c.mtu)
		}
		var udFlows []*gtSession
		var sess *gtSession
		if q.Type != "UD" {
			r := responder(q, q.DestQPN)
			sess = &gtSession{
				what:      fmt.Sprintf("%s %s/%#08x -> %s/%#08x", q.Type, q.IP, q.QPN, r.IP, r.QPN),
				transport: q.Type, learned: decode.PairingNone,
				a: gtAddr(t, q.IP), b: gtAddr(t, r.IP), aQPN: q.QPN, bQPN: r.QPN,
				aStart: q.SQPSN, hasAStart: true,
			}
			if q.Type == "RC" && answered(q) {
				sess.learned, sess.aKnown = decode.PairingResponse, true
			}
			c.sessions = append(c.sessions, sess)
		}
		for _, w := range ex.WRs {
			if w.Side != "requester" || w.QPN != q.QPN {
				continue
			}
			kind := gtWRKinds[w.Opcode]
			if kind == decode.MsgNone || w.Status == "POST_SEND_FAILED" || w.Status == "Work Request Flushed Error" {
				continue // never reached the wire
			}
			if w.Length == nil || w.PSNFirst == nil {
				t.Fatalf("%s.expect.json: wr_id %d (%s) has no length or psn_first", name, w.WRID, w.Opcode)
			}
			m := gtMsg{dir: decode.DirAToB, kind: kind, length: int64(*w.Length), psn: decode.PSN(*w.PSNFirst), hasPSN: true,
				what: fmt.Sprintf("wr_id %d %s: %s", w.WRID, w.Opcode, w.What)}
			if kind != decode.MsgRead && kind != decode.MsgAtomic {
				m.pkts = w.NPkts
			}
			m.ok = q.Type == "RC" && w.Status == "success"
			if sent, ok := gtNAKedWRs[name][w.WRID]; ok {
				m.naked, m.pkts = true, sent
				m.length = min(m.length, int64(sent)*int64(c.mtu))
			}
			if q.Type != "UD" {
				sess.msgs = append(sess.msgs, m)
				continue
			}
			qkey := q.QKey
			if k, ok := gtWrongQKey[name][w.WRID]; ok {
				qkey = k
			}
			var f *gtSession
			for _, u := range udFlows {
				if u.bQPN == w.DestQPN && u.qkey == qkey {
					f = u
				}
			}
			if f == nil {
				r := responder(q, w.DestQPN)
				f = &gtSession{
					what:      fmt.Sprintf("UD %s/%#08x -> %s/%#08x Q_Key %#x", q.IP, q.QPN, r.IP, r.QPN, qkey),
					transport: "UD", learned: decode.PairingUD,
					a: gtAddr(t, q.IP), b: gtAddr(t, r.IP), aQPN: q.QPN, aKnown: true, bQPN: r.QPN, qkey: qkey,
				}
				udFlows = append(udFlows, f)
				c.sessions = append(c.sessions, f)
			}
			f.msgs = append(f.msgs, m)
		}
	}
	return c
}

// gtFromPerftest builds the ground truth of a perftest capture.
func gtFromPerftest(t *testing.T, name string, runs []gtPerftestRun) *gtCase {
	var mpt gtMPTFile
	path := filepath.Join(gtDir, name+".mpt.json")
	gtReadJSON(t, path, &mpt)
	if len(mpt.QPs) != len(runs) {
		t.Fatalf("%s lists %d QPs, gtPerftest[%q] %d runs: one run per QP", path, len(mpt.QPs), name, len(runs))
	}
	c := &gtCase{name: name, mtu: gtMTU}
	b := gtAddr(t, mpt.Responder.Address)
	for i, q := range mpt.QPs {
		run := runs[i]
		if q.MTU != gtMTU {
			t.Fatalf("%s: QP %s mtu %d: the test assumes %d", path, q.QPN, q.MTU, gtMTU)
		}
		s := &gtSession{transport: q.Type, bQPN: gtHex(t, path, q.QPN), b: b}
		what := fmt.Sprintf("run %d: %s %d B", i+1, run.kind, run.size)
		specs := []gtMsgSpec{{run.kind, int64(run.size), run.iters}}
		switch q.Type {
		case "UD":
			s.learned = decode.PairingUD
			s.a = gtAddr(t, gtRequesterIP)
			s.qkey = gtHex(t, path, q.QKey)
			s.what = fmt.Sprintf("UD %s/? -> %s/%s Q_Key %s", gtRequesterIP, mpt.Responder.Address, q.QPN, q.QKey)
			s.msgs = gtAddSpecs(nil, specs, decode.DirAToB, 0, false, false, gtMTU, what)
		default:
			if q.Remote == nil {
				t.Fatalf("%s: QP %s has no remote", path, q.QPN)
			}
			s.a = gtAddr(t, q.Remote.Address)
			s.aQPN = gtHex(t, path, q.Remote.QPN)
			s.aStart, s.hasAStart = decode.PSN(gtHex(t, path, q.ExpectedPSN)), true
			s.learned = decode.PairingNone
			if q.Type == "RC" {
				s.learned, s.aKnown = decode.PairingResponse, true
			}
			s.what = fmt.Sprintf("%s %s/%s -> %s/%s", q.Type, q.Remote.Address, q.Remote.QPN, mpt.Responder.Address, q.QPN)
			s.msgs = gtAddSpecs(nil, specs, decode.DirAToB, s.aStart, true, q.Type == "RC", gtMTU, what)
		}
		c.sessions = append(c.sessions, s)
	}
	return c
}

// gtFromCM builds the ground truth of an rdma_cm capture from the CM
// messages it holds and gtCM.
func gtFromCM(t *testing.T, name string, sc gtCMScenario, run *gtRun, sum *gtSummary) *gtCase {
	c := &gtCase{name: name, mtu: gtMTU}
	// connections: a REQ and the REP answering it
	type conn struct{ req, rep *gtPkt }
	var conns []conn
	var sidrQPN, sidrQKey uint32
	var madFlows []*gtSession
	var mads uint64
	for i := range run.pkts {
		p := &run.pkts[i]
		if !p.ib || p.destQP != 1 {
			continue
		}
		if p.cm {
			mads++
			switch p.c.AttributeID {
			case decode.CMAttrREQ:
				conns = append(conns, conn{req: p})
			case decode.CMAttrREP:
				for j := range conns {
					if conns[j].req.c.LocalCommID == p.c.RemoteCommID && conns[j].req.src == p.dst {
						conns[j].rep = p
					}
				}
			case decode.CMAttrSIDRREP:
				sidrQPN, sidrQKey = p.c.QPN, p.c.QKey
			}
		}
		// every QP1 datagram is a UD message of a MAD flow (one per direction)
		var f *gtSession
		for _, m := range madFlows {
			if m.a == p.src && m.b == p.dst {
				f = m
			}
		}
		if f == nil {
			f = &gtSession{what: fmt.Sprintf("UD %s/0x000001 -> %s/0x000001 (CM MADs)", p.src, p.dst), transport: "UD", learned: decode.PairingUD,
				a: p.src, b: p.dst, aQPN: 1, aKnown: true, bQPN: 1, qkey: gtMADQKey}
			madFlows = append(madFlows, f)
		}
		f.msgs = append(f.msgs, gtMsg{dir: decode.DirAToB, kind: decode.MsgSend, length: gtMADLen, psn: p.psn, hasPSN: true,
			pkts: 1, what: fmt.Sprintf("MAD in frame %d", p.frame)})
	}
	var want uint64
	for _, n := range sum.cm {
		want += n
	}
	if mads != want {
		t.Errorf("%s: %d CM MADs decoded, tshark_summary.txt counts %d", name, mads, want)
	}
	var established []conn
	for _, cn := range conns {
		if cn.rep != nil {
			established = append(established, cn)
		}
	}
	if len(established) != len(sc.conns) {
		t.Fatalf("%s: the capture holds %d REQ/REP pairs, gtCM[%q] describes %d connections", name, len(established), name, len(sc.conns))
	}
	for i, cn := range established {
		// Linux loads each side's Starting PSN into its own rq_psn: the
		// active side sends from the REP's, the passive side from the REQ's.
		s := &gtSession{
			what:      fmt.Sprintf("RC %s/%#08x -> %s/%#08x (CM REQ frame %d, REP frame %d)", cn.req.src, cn.req.c.LocalQPN, cn.rep.src, cn.rep.c.LocalQPN, cn.req.frame, cn.rep.frame),
			transport: "RC", learned: decode.PairingCM,
			a: cn.req.src, b: cn.rep.src, aQPN: cn.req.c.LocalQPN, aKnown: true, bQPN: cn.rep.c.LocalQPN,
			aStart: cn.rep.c.StartingPSN, hasAStart: true, bStart: cn.req.c.StartingPSN, hasBStart: true,
			cm: true, commID: cn.req.c.LocalCommID,
		}
		for _, p := range run.pkts {
			if p.cm && p.c.AttributeID == decode.CMAttrDREQ &&
				(p.src == s.a && p.c.RemoteQPN == s.bQPN || p.src == s.b && p.c.RemoteQPN == s.aQPN) {
				s.closed = true
			}
		}
		s.msgs = gtAddSpecs(s.msgs, sc.conns[i].active, decode.DirAToB, s.aStart, true, true, gtMTU, "active side")
		s.msgs = gtAddSpecs(s.msgs, sc.conns[i].passive, decode.DirBToA, s.bStart, true, true, gtMTU, "passive side")
		c.sessions = append(c.sessions, s)
	}
	c.sessions = append(c.sessions, madFlows...)
	for _, u := range sc.ud {
		srcQP, dstQP, qkey := u.srcQP, u.dstQP, u.qkey
		if srcQP == 0 {
			srcQP = sidrQPN
		}
		if dstQP == 0 {
			dstQP = sidrQPN
		}
		if qkey == 0 {
			qkey = sidrQKey
		}
		if srcQP == 0 || dstQP == 0 || qkey == 0 {
			t.Fatalf("%s: UD flow %s -> %s needs the SIDR REP's QPN/Q_Key, which the capture lacks", name, u.src, u.dst)
		}
		s := &gtSession{what: fmt.Sprintf("UD %s/%#08x -> %s/%#08x Q_Key %#x", u.src, srcQP, u.dst, dstQP, qkey), transport: "UD",
			learned: decode.PairingUD, a: gtAddr(t, u.src), b: gtAddr(t, u.dst), aQPN: srcQP, aKnown: true, bQPN: dstQP, qkey: qkey}
		s.msgs = gtAddSpecs(nil, u.msgs, decode.DirAToB, 0, false, false, gtMTU, "datagram")
		c.sessions = append(c.sessions, s)
	}
	return c
}

// ---------------------------------------------------------------------------

func TestRXE(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(gtDir, "*.pcap"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Skip("no captures in testdata/rxe")
	}
	summary := gtReadSummary(t)
	var total gtTotals
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".pcap")
		t.Run(name, func(t *testing.T) {
			sum, ok := summary[name]
			if !ok {
				t.Fatalf("testdata/rxe/%s.pcap has no section in tshark_summary.txt: add its tshark counts there", name)
			}
			run := gtTrack(t, f)
			if len(run.pkts) != sum.packets {
				t.Fatalf("%s: %d frames, tshark_summary.txt says %d: the metadata describes another capture", name, len(run.pkts), sum.packets)
			}
			var c *gtCase
			_, hasExpect := os.Stat(filepath.Join(gtDir, name+".expect.json"))
			switch {
			case hasExpect == nil:
				c = gtFromExpect(t, name, run)
			case gtPerftest[name] != nil:
				c = gtFromPerftest(t, name, gtPerftest[name])
			default:
				sc, ok := gtCM[name]
				if !ok {
					t.Fatalf("testdata/rxe/%s.pcap has no ground truth: add %s.expect.json (rxe_scen), "+
						"an entry to gtPerftest (perftest, with %s.mpt.json) or to gtCM (rdma_cm) in flow/rxe_test.go", name, name, name)
				}
				c = gtFromCM(t, name, sc, run, sum)
			}
			for syn, n := range sum.syndromes {
				switch {
				case syn&0x60 == 0x60:
					c.naks[syn&0x1f] += n
				case syn&0x60 == 0x20:
					c.rnrs[syn&0x1f] += n
				}
			}
			if e, ok := gtErrors[name]; ok {
				c.retrans, c.noResp = e.retrans, e.noResponse
				if e.perRNR {
					for _, n := range c.rnrs {
						c.retrans += n
					}
				}
			}
			c.sum = sum
			gtCheck(t, c, run, &total)
		})
	}
	t.Logf("checked %d captures: %d sessions, %d messages, %d responses (%d NAKs, %d RNR NAKs, %d retransmissions)",
		len(files), total.sessions, total.msgs, total.responses, total.naks, total.rnrs, total.retrans)
}

type gtTotals struct {
	sessions, msgs, responses, naks, rnrs, retrans int
}

func gtCheck(t *testing.T, c *gtCase, run *gtRun, total *gtTotals) {
	// 1. sessions
	found := map[*gtSession]*flow.Session{}
	used := map[uint32]bool{}
	for _, w := range c.sessions {
		var cands []*flow.Session
		for _, s := range run.sessions {
			if w.match(s) {
				cands = append(cands, s)
			}
		}
		switch len(cands) {
		case 0:
			t.Errorf("%s: no session for %s (want %d messages)", c.name, w.what, len(w.msgs))
			continue
		case 1:
		default:
			t.Errorf("%s: %d sessions for %s: %s", c.name, len(cands), w.what, gtSessionsString(cands))
		}
		s := cands[0]
		found[w] = s
		used[s.ID] = true
		gtCheckSession(t, c, w, s)
	}
	for _, s := range run.sessions {
		if !used[s.ID] {
			t.Errorf("%s: unexpected session %s", c.name, gtSessionString(s))
		}
	}
	total.sessions += len(found)

	// 2. messages, per session and direction, in order
	got := map[uint32]*[2][]flow.Message{}
	for _, m := range run.msgs {
		id, dir := run.resolve(m.Session, m.Dir)
		if got[id] == nil {
			got[id] = new([2][]flow.Message)
		}
		m.Dir = dir
		got[id][dir&1] = append(got[id][dir&1], m)
	}
	for _, w := range c.sessions {
		s := found[w]
		if s == nil {
			continue
		}
		var g [2][]flow.Message
		if p := got[s.ID]; p != nil {
			g = *p
		}
		for dir := range 2 {
			var want []gtMsg
			for _, m := range w.msgs {
				if int(m.dir) == dir {
					want = append(want, m)
				}
			}
			gtCheckMessages(t, c.name, w.what, decode.Direction(dir), want, g[dir], run)
			total.msgs += len(want)
		}
		// the session's counters agree with the messages
		var kinds, bytes, oks [decode.NumMsgKinds]uint64
		exact := true
		for _, m := range w.msgs {
			kinds[m.kind]++
			if m.ok {
				oks[m.kind]++
			}
			if m.length < 0 {
				exact = false
			}
			bytes[m.kind] += uint64(max(m.length, 0))
		}
		for k := range kinds {
			k := decode.MsgKind(k)
			if s.Messages(k) != kinds[k] {
				t.Errorf("%s: %s: Messages[%s] = %d, want %d", c.name, w.what, k, s.Messages(k), kinds[k])
			}
			if exact && s.MessageBytes(k) != bytes[k] {
				t.Errorf("%s: %s: MessageBytes[%s] = %d, want %d", c.name, w.what, k, s.MessageBytes(k), bytes[k])
			}
			if l := s.Latency(k); l.N != oks[k] || l.N > 0 && l.Min <= 0 {
				t.Errorf("%s: %s: Latency[%s] has %d samples (min %v), want %d (the requests completed successfully)", c.name, w.what, k, l.N, l.Min, oks[k])
			}
		}
	}

	// 3. errors: NAKs, RNR NAKs, retransmissions; no false alarms
	var sumS flow.Findings
	for _, s := range run.sessions {
		for i := range s.Findings().NAKs {
			sumS.NAKs[i] += s.Findings().NAKs[i]
			sumS.RNRNaks[i] += s.Findings().RNRNaks[i]
		}
		sumS.Retransmitted += s.Findings().Retransmitted
		sumS.Duplicates += s.Findings().Duplicates
		sumS.OutOfOrder += s.Findings().OutOfOrder
		sumS.Gaps += s.Findings().Gaps
		sumS.LostPSNs += s.Findings().LostPSNs
		sumS.OpcodeSeq += s.Findings().OpcodeSeq
		sumS.Unmatched += s.Findings().Unmatched
		sumS.NoResponse += s.Findings().NoResponse
		sumS.Partial += s.Findings().Partial
	}
	for i := range c.naks {
		if sumS.NAKs[i] != c.naks[i] {
			t.Errorf("%s: NAKs with code %d (syndrome %#x): %d, tshark counts %d", c.name, i, 0x60|i, sumS.NAKs[i], c.naks[i])
		}
		if sumS.RNRNaks[i] != c.rnrs[i] {
			t.Errorf("%s: RNR NAKs with timer %d (syndrome %#x): %d, tshark counts %d", c.name, i, 0x20|i, sumS.RNRNaks[i], c.rnrs[i])
		}
		total.naks += int(c.naks[i])
		total.rnrs += int(c.rnrs[i])
	}
	total.retrans += int(c.retrans)
	var nakN, rnrN uint64
	for i := range c.naks {
		nakN += c.naks[i]
		rnrN += c.rnrs[i]
	}
	cm := func(attrs ...int) uint64 {
		var n uint64
		for _, a := range attrs {
			n += c.sum.cm[a]
		}
		return n
	}
	counters := []struct {
		name      string
		got, want uint64
		ev        decode.Event
	}{
		{"retransmissions", sumS.Retransmitted, c.retrans, decode.EventRetransmission},
		{"duplicates", sumS.Duplicates, 0, decode.EventDuplicate},
		{"out-of-order", sumS.OutOfOrder, 0, decode.EventOutOfOrder},
		{"PSN gaps", sumS.Gaps, 0, decode.EventPSNGap},
		{"lost PSNs", sumS.LostPSNs, 0, 0},
		{"opcode sequence errors", sumS.OpcodeSeq, 0, decode.EventOpcodeSeq},
		{"unmatched responses", sumS.Unmatched, 0, decode.EventUnmatched},
		{"requests never answered", sumS.NoResponse, c.noResp, decode.EventNoResponse},
		{"partial messages", sumS.Partial, 0, 0},
		{"mid-stream events", 0, 0, decode.EventMidStream},
		{"NAKs", nakN, nakN, decode.EventNAK},
		{"RNR NAKs", rnrN, rnrN, decode.EventRNRNak},
		// every RC request message of these captures has its own ACK
		{"coalesced ACKs", 0, 0, decode.EventAckCoalesced},
		// README: no CNP, every ICRC correct, nothing truncated
		{"CNPs", 0, 0, decode.EventCNP},
		{"ICRC errors", 0, 0, decode.EventICRCBad},
		{"truncated packets", 0, 0, decode.EventTruncated},
		// CM: REQ, REP, RTU, SIDR REQ/REP; DREQ, DREP; REJ
		{"CM connect messages", cm(0x10, 0x13, 0x14, 0x17, 0x18), cm(0x10, 0x13, 0x14, 0x17, 0x18), decode.EventConnect},
		{"CM disconnect messages", cm(0x15, 0x16), cm(0x15, 0x16), decode.EventDisconnect},
		{"CM rejects", cm(0x12), cm(0x12), decode.EventReject},
	}
	for _, e := range run.evs {
		if e.Frame != 0 && e.Kind != decode.EventNoResponse && (e.Frame > len(run.pkts) || run.pkts[e.Frame-1].an.Events&e.Kind == 0) {
			t.Errorf("%s: event %q for frame %d is not in the frame's analysis", c.name, e.Text, e.Frame)
		}
	}
	for _, k := range counters {
		var evs []string
		for _, e := range run.evs {
			if k.ev != 0 && e.Kind == k.ev {
				evs = append(evs, fmt.Sprintf("frame %d: %s", e.Frame, e.Text))
			}
		}
		if k.got != k.want {
			t.Errorf("%s: %d %s, want %d; events: %s", c.name, k.got, k.name, k.want, gtList(evs))
		}
		if k.ev != 0 && uint64(len(evs)) != k.want {
			t.Errorf("%s: %d %s events, want %d: %s", c.name, len(evs), k.name, k.want, gtList(evs))
		}
	}

	gtCheckPackets(t, c, run)
	gtCheckMsgAnalysis(t, c, run)

	// 4. every response points at a request of its session covering its PSN
	for _, p := range run.pkts {
		if !p.ib {
			continue
		}
		if p.an.Session == 0 {
			t.Errorf("%s: frame %d (%s PSN %d) has no session", c.name, p.frame, p.op, p.psn)
			continue
		}
		if !p.op.IsResponse() {
			continue
		}
		total.responses++
		gtCheckResponse(t, c, run, p)
	}
}

func gtCheckSession(t *testing.T, c *gtCase, w *gtSession, s *flow.Session) {
	where := fmt.Sprintf("%s: session %d (%s)", c.name, s.ID, w.what)
	if s.Learned != w.learned {
		t.Errorf("%s: learned %s, want %s", where, s.Learned, w.learned)
	}
	if w.aKnown && (!s.A.QPNKnown || s.A.QPN != w.aQPN) {
		t.Errorf("%s: A = %s, want QPN %#08x known", where, s.A, w.aQPN)
	}
	if !s.B.QPNKnown {
		t.Errorf("%s: B = %s: QPN not known", where, s.B)
	}
	if w.transport == "UD" && !s.A.QPNKnown {
		t.Errorf("%s: UD A = %s: the DETH names the source QP", where, s.A)
	}
	if w.transport == "UC" && s.A.QPNKnown {
		t.Errorf("%s: UC A = %s: nothing on the wire names the requester's QPN", where, s.A)
	}
	if w.hasAStart && (!s.A.HasStart || s.A.StartPSN != w.aStart) {
		t.Errorf("%s: A.StartPSN = %d (HasStart %v), want %d (requester's first PSN)", where, s.A.StartPSN, s.A.HasStart, w.aStart)
	}
	if w.hasBStart && (!s.B.HasStart || s.B.StartPSN != w.bStart) {
		t.Errorf("%s: B.StartPSN = %d (HasStart %v), want %d", where, s.B.StartPSN, s.B.HasStart, w.bStart)
	}
	if s.MTU != 0 && s.MTU != c.mtu {
		t.Errorf("%s: MTU %d (from %s), the path MTU is %d", where, s.MTU, s.MTUFrom(), c.mtu)
	}
	if w.cm {
		if s.MTU != c.mtu || s.MTUFrom() != "cm" {
			t.Errorf("%s: MTU %d from %q, want %d from the CM REQ", where, s.MTU, s.MTUFrom(), c.mtu)
		}
		if s.CommID() != w.commID {
			t.Errorf("%s: CommID %#x, want the REQ's Local Communication ID %#x", where, s.CommID(), w.commID)
		}
	}
	if s.Closed != w.closed {
		t.Errorf("%s: Closed = %v, want %v (CM DREQ for it in the capture: %v)", where, s.Closed, w.closed, w.closed)
	}
}

func gtCheckMessages(t *testing.T, name, what string, dir decode.Direction, want []gtMsg, got []flow.Message, run *gtRun) {
	side := "A->B"
	if dir == decode.DirBToA {
		side = "B->A"
	}
	where := fmt.Sprintf("%s: %s %s", name, what, side)
	bad := len(want) != len(got)
	if bad {
		t.Errorf("%s: %d messages, want %d", where, len(got), len(want))
	}
	for i := range min(len(want), len(got)) {
		w, g := want[i], got[i]
		var diffs []string
		if g.Kind != w.kind {
			diffs = append(diffs, fmt.Sprintf("kind %s, want %s", g.Kind, w.kind))
		}
		if w.length >= 0 && g.Length != uint64(w.length) {
			diffs = append(diffs, fmt.Sprintf("length %d, want %d", g.Length, w.length))
		}
		if w.hasPSN && g.PSN != w.psn {
			diffs = append(diffs, fmt.Sprintf("PSN %d, want %d", g.PSN, w.psn))
		}
		if w.pkts != 0 && g.Packets != w.pkts {
			diffs = append(diffs, fmt.Sprintf("%d packets, want %d", g.Packets, w.pkts))
		}
		if g.NAKed != w.naked {
			diffs = append(diffs, fmt.Sprintf("NAKed %v, want %v", g.NAKed, w.naked))
		}
		if g.Partial {
			diffs = append(diffs, "partial (the capture holds the whole message)")
		}
		// the payloads of the message's packets add up to its length
		if g.Kind != decode.MsgRead && g.Kind != decode.MsgAtomic {
			if n, l := gtPayload(run, g); n != g.Packets || l != g.Length {
				diffs = append(diffs, fmt.Sprintf("frames %d-%d hold %d request packets with %d B", g.FirstFrame, g.LastFrame, n, l))
			}
		}
		if len(diffs) > 0 {
			bad = true
			t.Errorf("%s message %d: %s\n\tgot  %s\n\twant %s", where, i+1, strings.Join(diffs, "; "), gtGotString(g), w)
		}
	}
	if bad {
		var b strings.Builder
		fmt.Fprintf(&b, "%s: messages got vs want:", where)
		for i := range max(len(want), len(got)) {
			b.WriteString("\n\t")
			if i < len(got) {
				b.WriteString(gtGotString(got[i]))
			} else {
				b.WriteString("-")
			}
			b.WriteString("  |  ")
			if i < len(want) {
				b.WriteString(want[i].String())
			} else {
				b.WriteString("-")
			}
		}
		t.Log(b.String())
	}
}

// gtPayload counts the first transmissions of request packets of m's
// session and direction in m's frames, and their payload bytes.
func gtPayload(run *gtRun, m flow.Message) (uint32, uint64) {
	var n uint32
	var l uint64
	for f := m.FirstFrame; f >= 1 && f <= m.LastFrame && f <= len(run.pkts); f++ {
		p := &run.pkts[f-1]
		if !p.ib || !p.op.IsRequest() || p.an.Events&(decode.EventRetransmission|decode.EventDuplicate) != 0 {
			continue
		}
		id, dir := run.resolve(p.an.Session, p.an.Dir)
		if id != m.Session || dir != m.Dir {
			continue
		}
		n++
		l += uint64(p.payload)
	}
	return n, l
}

func gtCheckResponse(t *testing.T, c *gtCase, run *gtRun, p gtPkt) {
	what := fmt.Sprintf("%s: frame %d (%s PSN %d", c.name, p.frame, p.op, p.psn)
	if p.aeth {
		what += fmt.Sprintf(", syndrome %#02x", p.syndrome)
	}
	what += ")"
	rf := p.an.RequestFrame
	sid, sdir := run.resolve(p.an.Session, p.an.Dir)
	if rf == 0 {
		if p.aeth && p.syndrome == 0x60 {
			// a PSN sequence error NAK carries the PSN the responder
			// expected: its request may never have been sent
			for _, q := range run.pkts {
				qid, qdir := run.resolve(q.an.Session, q.an.Dir)
				if q.ib && q.op.IsRequest() && qid == sid && qdir != sdir && q.psn == p.psn {
					t.Errorf("%s: no request frame, but frame %d sent PSN %d", what, q.frame, q.psn)
					return
				}
			}
			return
		}
		t.Errorf("%s: no request frame", what)
		return
	}
	if rf < 1 || rf > len(run.pkts) || rf >= p.frame {
		t.Errorf("%s: request frame %d is not an earlier frame", what, rf)
		return
	}
	q := run.pkts[rf-1]
	qid, qdir := run.resolve(q.an.Session, q.an.Dir)
	switch {
	case !q.ib || !q.op.IsRequest():
		t.Errorf("%s: request frame %d is a %s, not a request", what, rf, q.op)
	case qid != sid || qdir == sdir:
		t.Errorf("%s: request frame %d is in session %d dir %d, the response in session %d dir %d", what, rf, qid, qdir, sid, sdir)
	default:
		n := uint32(1)
		if q.op.Op() == decode.OpReadRequest {
			n = gtSpan(decode.MsgRead, uint64(q.dmaLen), c.mtu)
		}
		if d := p.psn.Dist(q.psn); d >= n {
			t.Errorf("%s: request frame %d (%s PSN %d, %d PSNs) does not cover the response's PSN", what, rf, q.op, q.psn, n)
		}
		if rtt := p.at.Sub(q.at); !p.an.HasRTT || p.an.RTT != rtt {
			t.Errorf("%s: RTT %v (known %v), want %v since request frame %d", what, p.an.RTT, p.an.HasRTT, rtt, rf)
		}
		// a positive response completes its request
		ack := p.aeth && p.syndrome&0x60 == 0
		switch p.op.Op() {
		case decode.OpReadResponseFirst, decode.OpReadResponseMiddle:
			ack = false
		case decode.OpAtomicAcknowledge:
			ack = true
		}
		if ack && !slices.Contains(p.an.Acked, rf) {
			t.Errorf("%s: completes request frame %d, but Acked = %v", what, rf, p.an.Acked)
		}
		if !ack && len(p.an.Acked) > 0 {
			t.Errorf("%s: Acked = %v: a NAK or a READ response before the last completes nothing", what, p.an.Acked)
		}
	}
}

func gtSessionString(s *flow.Session) string {
	var kinds []string
	for k := range decode.NumMsgKinds {
		if n := s.Messages(k); n > 0 {
			kinds = append(kinds, fmt.Sprintf("%s:%d", k, n))
		}
	}
	sort.Strings(kinds)
	str := fmt.Sprintf("%d %s %s %s -> %s start %d/%d", s.ID, s.Transport, s.Learned, s.A, s.B, s.A.StartPSN, s.B.StartPSN)
	if s.Transport == decode.TransportUD {
		str += fmt.Sprintf(" Q_Key %#x", s.QKey())
	}
	return str + fmt.Sprintf(" (%d packets; messages %s)", s.Packets(), strings.Join(kinds, " "))
}

func gtSessionsString(ss []*flow.Session) string {
	var out []string
	for _, s := range ss {
		out = append(out, gtSessionString(s))
	}
	return strings.Join(out, "; ")
}

func gtList(l []string) string {
	if len(l) == 0 {
		return "none"
	}
	return strings.Join(l, "; ")
}

// gtCheckPackets checks each packet's PSN analysis and the sessions'
// per-direction counters against the packets annotated with them.
func gtCheckPackets(t *testing.T, c *gtCase, run *gtRun) {
	type qkey struct {
		id  uint32
		dir decode.Direction
		psn decode.PSN
	}
	sent := map[qkey][]int{} // transmissions of each PSN
	type dkey struct {
		id  uint32
		dir decode.Direction
	}
	type sideStats struct {
		flow.DirStats
		responses uint64
	}
	var stats = map[dkey]*sideStats{}
	for _, p := range run.pkts {
		if !p.ib || p.an.Session == 0 {
			continue
		}
		id, dir := run.resolve(p.an.Session, p.an.Dir)
		st := stats[dkey{id, dir}]
		if st == nil {
			st = new(sideStats)
			stats[dkey{id, dir}] = st
		}
		st.Packets++
		st.Bytes += uint64(p.length)
		st.PayloadBytes += uint64(p.payload)
		switch {
		case p.op.IsRequest():
			st.Requests++
		case p.op != decode.CNP: // (a CNP is neither: Session.Responses)
			st.responses++
		}
		if !p.op.IsRequest() || p.op.Transport() == decode.TransportUD {
			continue
		}
		where := fmt.Sprintf("%s: frame %d (%s PSN %d)", c.name, p.frame, p.op, p.psn)
		k := qkey{id, dir, p.psn}
		prev := sent[k]
		sent[k] = append(prev, p.frame)
		a := p.an
		if len(prev) == 0 {
			// a first transmission: in sequence, nothing to flag
			if !a.HasExpected || a.ExpectedPSN != p.psn {
				t.Errorf("%s: expected PSN %d (known %v): every request of the capture is in sequence", where, a.ExpectedPSN, a.HasExpected)
			}
			if a.Events&(decode.EventRetransmission|decode.EventDuplicate|decode.EventOutOfOrder|decode.EventPSNGap) != 0 || a.Cause != decode.CauseNone {
				t.Errorf("%s: first transmission flagged: events %#x, cause %q", where, a.Events, a.Cause)
			}
			continue
		}
		// A retransmission: caused by the RNR NAK or NAK (PSN sequence
		// error) that answered the previous transmission, else by the
		// requester's transport timer. A NAK whose PSN the requester never
		// sent asks for nothing it can resend: a requester takes a
		// response older than its oldest outstanding PSN for a duplicate
		// and ignores it (rxe's check_psn; err_psn_seq resends 20 ms after
		// the NAK, at the transport timer, like err_retry_exc).
		last := prev[len(prev)-1]
		cause, causeFrame, note := decode.CauseTimeout, 0, ""
		for _, r := range run.pkts[last:p.frame] {
			rid, rdir := run.resolve(r.an.Session, r.an.Dir)
			if !r.aeth || rid != id || rdir == dir {
				continue
			}
			switch {
			case r.syndrome&0x60 == 0x20:
				cause, causeFrame = decode.CauseRNR, r.frame
			case r.syndrome == 0x60 && len(sent[qkey{id, dir, r.psn}]) > 0:
				cause, causeFrame = decode.CauseNAK, r.frame
			case r.syndrome == 0x60:
				note = fmt.Sprintf("; the NAK in frame %d asks for PSN %d, which the requester never sent", r.frame, r.psn)
			}
		}
		if a.Events&decode.EventRetransmission == 0 {
			t.Errorf("%s: PSN sent before in frame(s) %v: not flagged a retransmission (events %#x)", where, prev, a.Events)
		}
		if a.OrigFrame != prev[0] {
			t.Errorf("%s: retransmission's original frame %d, want %d", where, a.OrigFrame, prev[0])
		}
		if a.Cause != cause || a.CauseFrame != causeFrame {
			t.Errorf("%s: retransmission cause %q (frame %d), want %q (frame %d): previous transmission in frame %d, %v earlier%s",
				where, a.Cause, a.CauseFrame, cause, causeFrame, last, p.at.Sub(run.pkts[last-1].at), note)
		}
	}
	for _, s := range run.sessions {
		for dir := range 2 {
			want := stats[dkey{s.ID, decode.Direction(dir)}]
			if want == nil {
				want = new(sideStats)
			}
			if got := (sideStats{s.Sent[dir], s.Responses(dir)}); got != *want {
				t.Errorf("%s: session %d (%s) Sent[%d] = %+v, the packets annotated with it make %+v", c.name, s.ID, gtSessionString(s), dir, got, *want)
			}
		}
	}
}

// gtCheckMsgAnalysis checks the rocetap.msg.* analysis of the packet that
// completes each message: the last request packet of a SEND or WRITE, the
// last response to a READ, the ATOMIC ACK.
func gtCheckMsgAnalysis(t *testing.T, c *gtCase, run *gtRun) {
	for _, m := range run.msgs {
		where := fmt.Sprintf("%s: session %d %s PSN %d (frames %d-%d)", c.name, m.Session, m.Kind, m.PSN, m.FirstFrame, m.LastFrame)
		if m.LastFrame < 1 || m.LastFrame > len(run.pkts) {
			t.Errorf("%s: last frame out of the capture", where)
			continue
		}
		want := decode.Analysis{MsgKind: m.Kind, MsgLength: m.Length, MsgFirst: m.FirstFrame, MsgPackets: m.Packets}
		var at *gtPkt
		switch m.Kind {
		case decode.MsgRead, decode.MsgAtomic:
			// the response that completes it, or the NAK that refuses it
			for i := m.LastFrame; i < len(run.pkts); i++ {
				r := &run.pkts[i]
				if r.ib && r.op.IsResponse() && r.an.RequestFrame == m.LastFrame {
					if r.aeth && r.syndrome&0x60 != 0 {
						at = nil // NAKed: no data
						break
					}
					if r.an.MsgKind != decode.MsgNone || r.op.Op() == decode.OpReadResponseOnly || r.op.Op() == decode.OpReadResponseLast || r.op.Op() == decode.OpAtomicAcknowledge {
						at = r
						break
					}
				}
			}
			if m.Kind == decode.MsgRead {
				want.MsgPackets = gtSpan(decode.MsgRead, m.Length, c.mtu)
			}
			if at == nil {
				continue
			}
		default:
			if m.NAKed {
				continue // nothing completes it
			}
			at = &run.pkts[m.LastFrame-1]
		}
		got := at.an
		if got.MsgKind != want.MsgKind || got.MsgLength != want.MsgLength || got.MsgFirst != want.MsgFirst || got.MsgPackets != want.MsgPackets || got.MsgPartial {
			t.Errorf("%s: frame %d completes it with msg kind %s length %d first %d packets %d partial %v, want %s %d %d %d false",
				where, at.frame, got.MsgKind, got.MsgLength, got.MsgFirst, got.MsgPackets, got.MsgPartial,
				want.MsgKind, want.MsgLength, want.MsgFirst, want.MsgPackets)
		}
	}
}
