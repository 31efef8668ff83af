package replay

import (
	"encoding/json"
	"encoding/xml"
	"io"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/rocetap/rocetap/decode"
	"github.com/rocetap/rocetap/hca"
)

// The JSON report (docs/json.md, "rocetap replay -T json"): one object;
// its arrays have one element per line.

type jsonIgnored struct {
	Total      int `json:"total"`
	NotRDMA    int `json:"not_rdma"`
	Management int `json:"management"`
	CNP        int `json:"cnp"`
	Reverse    int `json:"reverse"`
	OtherHosts int `json:"other_hosts"`
	NoAddress  int `json:"no_address"`
	Filtered   int `json:"filtered"`
}

type jsonHead struct {
	Capture           string         `json:"capture"`
	MPT               string         `json:"mpt"`
	Responder         string         `json:"responder"`
	Profile           string         `json:"profile"`
	Verdict           string         `json:"verdict"`
	Packets           int            `json:"packets"`
	Requests          int            `json:"requests"`
	ModelResponses    int            `json:"model_responses"`
	CapturedResponses int            `json:"captured_responses"`
	Compared          int            `json:"compared"`
	NotCompared       int            `json:"not_compared"`
	CutShort          bool           `json:"cut_short"`
	Ignored           jsonIgnored    `json:"ignored"`
	DivergenceCount   int            `json:"divergence_count"`
	ByKind            map[string]int `json:"divergences_by_kind"`
	Omitted           int            `json:"divergences_omitted"`
	Notes             []string       `json:"notes"`
	NoteCount         int            `json:"note_count"`
	NotesByKind       map[string]int `json:"notes_by_kind"`
	NotesOmitted      int            `json:"notes_omitted"`
}

type jsonPeer struct {
	Addr *string `json:"addr"`
	QPN  *string `json:"qpn"`
}

type jsonSession struct {
	ID                int            `json:"id"`
	Name              string         `json:"name"`
	QPN               *string        `json:"qpn"`
	Type              *string        `json:"type"`
	InMPT             bool           `json:"in_mpt"`
	Peer              jsonPeer       `json:"peer"`
	Requests          int            `json:"requests"`
	Executed          int            `json:"executed"`
	Dropped           map[string]int `json:"dropped"`
	ModelResponses    int            `json:"model_responses"`
	CapturedResponses int            `json:"captured_responses"`
	Compared          int            `json:"compared"`
	Coalesced         int            `json:"coalesced"`
	Unsolicited       int            `json:"unsolicited"`
	Divergences       int            `json:"divergences"`
	Notes             int            `json:"notes"`
	NothingToCompare  bool           `json:"nothing_to_compare"`
	DropList          *[]jsonDrop    `json:"drop_list,omitempty"`
	DropListOmitted   *int           `json:"drop_list_omitted,omitempty"`
}

type jsonDrop struct {
	Frame  int        `json:"frame"`
	PSN    decode.PSN `json:"psn"`
	Reason string     `json:"reason"`
	Why    string     `json:"why"`
}

// jsonFinding is a divergence or a note in the JSON report.
type jsonFinding struct {
	Kind          string     `json:"kind"`
	Session       int        `json:"session"`
	SessionName   string     `json:"session_name"`
	QPN           *string    `json:"qpn"`
	PeerQPN       *string    `json:"peer_qpn"`
	PSN           decode.PSN `json:"psn"`
	RequestFrame  int        `json:"request_frame"`
	ResponseFrame int        `json:"response_frame"`
	Expected      string     `json:"expected"`
	Actual        string     `json:"actual"`
	Offset        *int       `json:"offset,omitempty"`
	Count         *int       `json:"count,omitempty"`
	Message       string     `json:"message"`
}

type jsonCompletion struct {
	Frame      int        `json:"frame"`
	Side       string     `json:"side"`
	QPN        string     `json:"qpn"`
	Status     string     `json:"status"`
	StatusName string     `json:"status_name"`
	Opcode     string     `json:"opcode"`
	PSN        decode.PSN `json:"psn"`
	ByteLen    *uint64    `json:"byte_len,omitempty"`
	Imm        *string    `json:"imm,omitempty"`
	InvRKey    *string    `json:"invalidated_rkey,omitempty"`
	SrcQP      *string    `json:"src_qp,omitempty"`
}

func strp(s string) *string { return &s }

func optHex(v uint32, ok bool) *string {
	if !ok {
		return nil
	}
	return strp(hex24(v))
}

func hex32(v uint32) string {
	s := strconv.FormatUint(uint64(v)|1<<32, 16)
	return "0x" + s[1:]
}

// AppendJSON appends the report as one JSON object (see docs/json.md).
func (r *Report) AppendJSON(b []byte) []byte {
	verdict := "pass"
	if !r.Pass() {
		verdict = "fail"
	}
	h := jsonHead{Capture: r.Capture, MPT: r.MPT, Responder: r.Responder.String(), Profile: r.Profile, Verdict: verdict,
		Packets: r.Packets, Requests: r.Requests, ModelResponses: r.ModelResponses, CapturedResponses: r.CapturedResponses,
		Compared: r.Compared, NotCompared: r.NotCompared, CutShort: r.CutShort, DivergenceCount: r.DivergenceCount, ByKind: map[string]int{}, Omitted: r.DivergencesOmitted,
		Notes: r.Notes(), NoteCount: r.NoteCount, NotesByKind: map[string]int{}, NotesOmitted: r.NotesOmitted,
		Ignored: jsonIgnored{Total: r.Ignored.Total(), NotRDMA: r.Ignored.NotRDMA, Management: r.Ignored.Management,
			CNP: r.Ignored.CNP, Reverse: r.Ignored.Reverse, OtherHosts: r.Ignored.OtherHosts, NoAddress: r.Ignored.NoAddress,
			Filtered: r.Ignored.Filtered}}
	if h.Notes == nil {
		h.Notes = []string{}
	}
	for _, k := range Kinds() {
		h.ByKind[k.String()] = r.ByKind[k]
	}
	for _, k := range NoteKinds() {
		h.NotesByKind[k.String()] = r.NotesByKind[k]
	}
	head, _ := json.Marshal(h)
	b = append(b, head[:len(head)-1]...) // leave the object open
	b = append(b, ",\n \"sessions\":["...)
	for i, s := range r.Sessions {
		js := jsonSession{ID: s.ID, Name: s.Name, QPN: optHex(s.QPN, s.HasQPN), InMPT: s.InMPT,
			Peer:     jsonPeer{QPN: optHex(s.PeerQPN, s.HasPeerQPN)},
			Requests: s.Requests, Executed: s.Executed, Dropped: map[string]int{},
			ModelResponses: s.ModelResponses, CapturedResponses: s.CapturedResponses, Compared: s.Compared,
			Coalesced: s.Coalesced, Unsolicited: s.Unsolicited, Divergences: s.Divergences, Notes: s.Notes,
			NothingToCompare: s.NothingToCompare()}
		if s.InMPT {
			js.Type = strp(s.Type.String())
		}
		if js.NothingToCompare {
			drops := make([]jsonDrop, len(s.DropList))
			for i, d := range s.DropList {
				drops[i] = jsonDrop{Frame: d.Frame, PSN: d.PSN, Reason: d.Reason.String(), Why: d.Why}
			}
			omitted := s.DropListOmitted
			js.DropList, js.DropListOmitted = &drops, &omitted
		}
		if s.PeerAddr.IsValid() {
			js.Peer.Addr = strp(s.PeerAddr.String())
		}
		for _, dc := range s.Drops() {
			js.Dropped[dc.Reason.String()] = dc.Count
		}
		b = appendElem(b, i, js)
	}
	b = append(b, "],\n \"divergences\":["...)
	for i := range r.Divergences {
		d := &r.Divergences[i]
		b = appendElem(b, i, findingJSON(d.Kind.String(), &d.Finding, d.Kind == KindReadData))
	}
	b = append(b, "],\n \"note_list\":["...)
	for i := range r.NoteList {
		n := &r.NoteList[i]
		b = appendElem(b, i, findingJSON(n.Kind.String(), &n.Finding, n.Kind == NoteMemoryChanged && n.Count > 0))
	}
	c := &r.Completions
	b = append(b, "],\n \"completions\":{\"total\":"+strconv.Itoa(c.Total())+",\"requester\":"...)
	b = appendStatusMap(b, &c.Requester)
	b = append(b, ",\"responder\":"...)
	b = appendStatusMap(b, &c.Responder)
	b = append(b, ",\"omitted\":"+strconv.Itoa(c.Omitted)+",\"list\":["...)
	for i := range c.List {
		b = appendElem(b, i, completionJSON(&c.List[i]))
	}
	b = append(b, "]}"...)
	if r.Cache != nil {
		cj, _ := json.Marshal(r.Cache.json())
		b = append(b, ",\n \"cache\":"...)
		b = append(b, cj...)
	}
	b = append(b, "}\n"...)
	return b
}

func completionJSON(c *hca.Completion) jsonCompletion {
	jc := jsonCompletion{Frame: c.Frame, Side: "requester", QPN: hex24(c.QPN), Status: c.Status.String(),
		StatusName: c.Status.Name(), Opcode: c.Opcode.String(), PSN: c.PSN}
	if !c.Requester {
		jc.Side = "responder"
		n := c.ByteLen
		jc.ByteLen = &n
	}
	if c.HasImm {
		jc.Imm = strp(hex32(c.Imm))
	}
	if c.HasInv {
		jc.InvRKey = strp(hex32(c.InvRKey))
	}
	if c.SrcQP != 0 {
		jc.SrcQP = strp(hex24(c.SrcQP))
	}
	return jc
}

func appendElem(b []byte, i int, v any) []byte {
	if i > 0 {
		b = append(b, ',')
	}
	b = append(b, "\n  "...)
	data, _ := json.Marshal(v)
	return append(b, data...)
}

func appendStatusMap(b []byte, c *[256]int) []byte {
	m := map[string]int{}
	for st, n := range c {
		if n > 0 {
			m[hca.WCStatus(st).String()] = n
		}
	}
	data, _ := json.Marshal(m)
	return append(b, data...)
}

// JUnit XML: one test suite for the capture, one test case per session,
// one failure per divergence.

type junitSuite struct {
	XMLName    xml.Name        `xml:"testsuite"`
	Name       string          `xml:"name,attr"`
	Tests      int             `xml:"tests,attr"`
	Failures   int             `xml:"failures,attr"`
	Errors     int             `xml:"errors,attr"`
	Skipped    int             `xml:"skipped,attr"`
	Properties []junitProperty `xml:"properties>property"`
	Cases      []junitCase     `xml:"testcase"`
	SystemOut  string          `xml:"system-out,omitempty"`
}

type junitProperty struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type junitCase struct {
	ClassName string         `xml:"classname,attr"`
	Name      string         `xml:"name,attr"`
	Failures  []junitFailure `xml:"failure"`
	SystemOut string         `xml:"system-out,omitempty"`
}

type junitFailure struct {
	Type    string `xml:"type,attr"`
	Message string `xml:"message,attr"`
	Text    string `xml:",chardata"`
}

// WriteJUnit writes the report as JUnit XML for CI systems: a
// <testsuite name="rocetap replay CAPTURE"> with one <testcase> per
// session and one <failure> per divergence (type: its kind; message: its
// sentence with the frame numbers). A session's notes (legal responder
// choices, never failures) are its <system-out>, a line each.
func (r *Report) WriteJUnit(w io.Writer) error {
	s := junitSuite{Name: "rocetap replay " + r.Capture,
		Properties: []junitProperty{{"capture", r.Capture}, {"mpt", r.MPT}, {"responder", r.Responder.String()}, {"profile", r.Profile}},
		SystemOut:  r.Verdict()}
	class := "rocetap.replay." + filepath.Base(r.Capture)
	for _, ses := range r.Sessions {
		tc := junitCase{ClassName: class, Name: ses.Name}
		for i := range r.Divergences {
			d := &r.Divergences[i]
			if d.Session != ses.ID {
				continue
			}
			text := "kind: " + d.Kind.String() + "\nrequest frame: " + strconv.Itoa(d.RequestFrame) +
				"\nresponse frame: " + strconv.Itoa(d.ResponseFrame) + "\nmodel: " + nonEmpty(d.Expected, "(no response)") +
				"\ncaptured: " + nonEmpty(d.Actual, "(no response)") + "\n"
			tc.Failures = append(tc.Failures, junitFailure{Type: d.Kind.String(), Message: d.Message, Text: text})
		}
		var notes strings.Builder
		for i := range r.NoteList {
			if n := &r.NoteList[i]; n.Session == ses.ID {
				notes.WriteString("note (" + n.Kind.String() + "): " + n.Message + "\n")
			}
		}
		tc.SystemOut = notes.String()
		s.Cases = append(s.Cases, tc)
	}
	if r.DivergencesOmitted > 0 {
		s.Cases = append(s.Cases, junitCase{ClassName: class, Name: "divergences not listed",
			Failures: []junitFailure{{Type: "omitted", Message: strconv.Itoa(r.DivergencesOmitted) +
				" more divergences, not listed (raise --max-divergences to see them)"}}})
	}
	s.Tests = len(s.Cases)
	for _, tc := range s.Cases {
		if len(tc.Failures) > 0 {
			s.Failures++
		}
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(s); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

// findingJSON is f in the JSON report; withBytes adds its offset and count
// (read_data, memory_changed).
func findingJSON(kind string, f *Finding, withBytes bool) jsonFinding {
	j := jsonFinding{Kind: kind, Session: f.Session, SessionName: f.SessionName,
		QPN: optHex(f.QPN, f.HasQPN), PeerQPN: optHex(f.PeerQPN, f.HasPeerQPN), PSN: f.PSN,
		RequestFrame: f.RequestFrame, ResponseFrame: f.ResponseFrame, Expected: f.Expected, Actual: f.Actual,
		Message: f.Message}
	if withBytes {
		j.Offset, j.Count = &f.Offset, &f.Count
	}
	return j
}
