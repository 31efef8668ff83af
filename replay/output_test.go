package replay

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"strings"
	"testing"

	"github.com/rocetap/rocetap/decode"
	"github.com/rocetap/rocetap/hca"
)

// divergentReport has two sessions, one with two divergences whose texts
// hold characters XML and JSON must escape.
func divergentReport(t *testing.T) *Report {
	t.Helper()
	why := `rkey <0x1234> & "friends": out of bounds`
	rep, _ := runSteps(t, Options{Capture: "a<b>.pcap", MPT: "x&y.mpt.json", Profile: "ibta"}, []step{
		toModel(req(1, 5, decode.OpWriteOnly), answers(nak(5, 0x62, 0, why))),
		captured(resp(2, 5, decode.OpAcknowledge, 0x1F, 1)),
		toModel(ipPacket(3, requester, responder, decode.Opcode(decode.TransportUD|decode.OpSendOnly), 0x31, 1),
			hca.Result{Executed: true, Completions: []hca.Completion{{Frame: 3, QPN: 0x31, Status: hca.WCSuccess, ByteLen: 104, SrcQP: 0x77, Imm: 7, HasImm: true}}}),
		captured(resp(4, 9, decode.OpAtomicAcknowledge, 0x1F, 1)),
	})
	if rep.DivergenceCount != 2 { // syndrome (ACK for a NAK), extra response
		t.Fatalf("%d divergences, want 2", rep.DivergenceCount)
	}
	return rep
}

func TestJUnitParsesBack(t *testing.T) {
	rep := divergentReport(t)
	var buf bytes.Buffer
	if err := rep.WriteJUnit(&buf); err != nil {
		t.Fatal(err)
	}
	var suite struct {
		XMLName  xml.Name `xml:"testsuite"`
		Name     string   `xml:"name,attr"`
		Tests    int      `xml:"tests,attr"`
		Failures int      `xml:"failures,attr"`
		Props    []struct {
			Name  string `xml:"name,attr"`
			Value string `xml:"value,attr"`
		} `xml:"properties>property"`
		Cases []struct {
			Name     string `xml:"name,attr"`
			Class    string `xml:"classname,attr"`
			Failures []struct {
				Type    string `xml:"type,attr"`
				Message string `xml:"message,attr"`
				Text    string `xml:",chardata"`
			} `xml:"failure"`
		} `xml:"testcase"`
	}
	if err := xml.Unmarshal(buf.Bytes(), &suite); err != nil {
		t.Fatalf("invalid XML: %v\n%s", err, buf.String())
	}
	if suite.Name != "rocetap replay a<b>.pcap" || suite.Tests != len(rep.Sessions) || suite.Failures != 1 {
		t.Fatalf("suite %q tests %d failures %d\n%s", suite.Name, suite.Tests, suite.Failures, buf.String())
	}
	if suite.Props[1].Value != "x&y.mpt.json" {
		t.Errorf("properties %+v", suite.Props)
	}
	var msgs []string
	for i, c := range suite.Cases {
		if c.Name != rep.Sessions[i].Name || c.Class != "rocetap.replay.a<b>.pcap" {
			t.Errorf("test case %d: %q class %q", i, c.Name, c.Class)
		}
		for _, f := range c.Failures {
			msgs = append(msgs, f.Message)
			if !strings.Contains(f.Text, "request frame: ") || f.Type == "" {
				t.Errorf("failure %q: text %q", f.Type, f.Text)
			}
		}
	}
	var want []string
	for _, d := range rep.Divergences {
		want = append(want, d.Message)
	}
	if strings.Join(msgs, "\n") != strings.Join(want, "\n") {
		t.Fatalf("failure messages:\n%s\nwant:\n%s", strings.Join(msgs, "\n"), strings.Join(want, "\n"))
	}
	if !strings.Contains(msgs[0], `rkey <0x1234> & "friends"`) || !strings.Contains(msgs[0], "frame 1 → 2") {
		t.Errorf("message lost its text: %q", msgs[0])
	}
}

func TestJSONReport(t *testing.T) {
	rep := divergentReport(t)
	out := rep.AppendJSON(nil)
	var doc struct {
		Verdict     string `json:"verdict"`
		Count       int    `json:"divergence_count"`
		Sessions    []map[string]any
		Divergences []struct {
			Kind          string  `json:"kind"`
			QPN           *string `json:"qpn"`
			RequestFrame  int     `json:"request_frame"`
			ResponseFrame int     `json:"response_frame"`
			Message       string  `json:"message"`
		}
		Completions struct {
			Total     int            `json:"total"`
			Responder map[string]int `json:"responder"`
			List      []map[string]any
		}
		Notes []string `json:"notes"`
	}
	if err := json.Unmarshal(out, &doc); err != nil {
		t.Fatalf("invalid JSON: %v\n%s", err, out)
	}
	if doc.Verdict != "fail" || doc.Count != rep.DivergenceCount || len(doc.Divergences) != len(rep.Divergences) || len(doc.Sessions) != len(rep.Sessions) {
		t.Fatalf("%+v", doc)
	}
	if doc.Divergences[0].Message != rep.Divergences[0].Message || *doc.Divergences[0].QPN != "0x000011" {
		t.Errorf("divergence %+v", doc.Divergences[0])
	}
	if doc.Completions.Total != 1 || doc.Completions.Responder["success"] != 1 {
		t.Errorf("completions %+v", doc.Completions)
	}
	c := doc.Completions.List[0]
	if c["side"] != "responder" || c["byte_len"] != 104.0 || c["imm"] != "0x00000007" || c["src_qp"] != "0x000077" || c["status_name"] != "IBV_WC_SUCCESS" {
		t.Errorf("completion %v", c)
	}
	if doc.Notes == nil {
		t.Error("notes is not an array")
	}
	// One line per array element.
	if n := bytes.Count(out, []byte("\n  {")); n != len(rep.Sessions)+len(rep.Divergences)+1 {
		t.Errorf("%d element lines\n%s", n, out)
	}
}

func TestTextReport(t *testing.T) {
	rep := divergentReport(t)
	txt := string(rep.AppendText(nil))
	for _, want := range []string{
		"Replay of a<b>.pcap into the model of x&y.mpt.json\n",
		"Responder: 10.0.0.2, profile ibta\n",
		"  session                             type  requests  executed  dropped  model  captured  compared  divergences\n",
		"  QP 0x000011 ← 10.0.0.1 QP 0x000012  RC           1         1        0      1         2         1            2\n",
		"  responder: 1 success\n",
		"Divergences: 2 (extra_response 1, syndrome 1)\n  QP 0x000011 ← 10.0.0.1 QP 0x000012\n    frame 1 → 2: syndrome:",
		"\nreplay: 2 requests, 1 response compared, 2 divergences\n",
	} {
		if !strings.Contains(txt, want) {
			t.Errorf("text lacks %q:\n%s", want, txt)
		}
	}
}
