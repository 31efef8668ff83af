package flow_test

import (
	"encoding/json"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/rocetap/rocetap/decode"
	"github.com/rocetap/rocetap/flow"
)

// nvmeExpect is the part of a ulp capture's .expect.json the tests read:
// the kernel's tracepoints joined with the wire (see
// ../shared/captures/ulp/README.md).
type nvmeExpect struct {
	Connections []struct {
		QID int `json:"nvme_qid"`
		Req struct {
			Frame   int `json:"frame"`
			RecFmt  int `json:"recfmt"`
			QID     int `json:"qid"`
			HRQSize int `json:"hrqsize"`
			HSQSize int `json:"hsqsize"`
		} `json:"wire_cm_req"`
	} `json:"connections"`
	Commands []struct {
		QID      int     `json:"qid"`
		CID      int     `json:"cid"`
		Kind     string  `json:"kind"`
		Name     string  `json:"name"`
		Opcode   int     `json:"opcode"`
		FCType   *int    `json:"fctype"`
		Property string  `json:"property"`
		NSID     *uint32 `json:"nsid"`
		SLBA     *uint64 `json:"slba"`
		NLB0     *int    `json:"nlb_field_0based"`
		Status   int     `json:"status"`
		Frame    int     `json:"wire_frame"`
		CQEFrame *int    `json:"wire_cqe_frame"`
		Transfer string  `json:"expected_transfer"`
		LBA      string
		Wire     struct {
			SGL           string   `json:"sgl"`
			SGLLen        int      `json:"sgl_len"`
			SGLKey        string   `json:"sgl_key"`
			SGLAddr       string   `json:"sgl_addr"`
			Bytes         uint64   `json:"rdma_bytes_with_key_before_cqe"`
			InCapsule     int      `json:"in_capsule_bytes"`
			CapsuleFrames int      `json:"capsule_frames"`
			Ops           []string `json:"rdma_ops"`
			InvKey        string   `json:"cqe_send_with_invalidate_rkey"`
		} `json:"wire"`
	} `json:"commands"`
}

// nvmeNames maps the .expect.json's names to rocetap's.
var nvmeNames = map[string]string{"connect": "Connect", "property_get": "Property Get", "property_set": "Property Set", "identify": "Identify",
	"get_log_page": "Get Log Page", "set_features": "Set Features", "async_event": "Asynchronous Event Request", "keep_alive": "Keep Alive",
	"read": "Read", "write": "Write"}

func hexU(t *testing.T, s string) uint64 {
	t.Helper()
	v, err := strconv.ParseUint(strings.TrimPrefix(s, "0x"), 16, 64)
	if err != nil {
		t.Fatalf("%q: %v", s, err)
	}
	return v
}

// TestNVMeGroundTruth: on both NVMe-oF captures, every command the kernel
// traced is found on its queue with its cid, opcode, nsid/slba/nlb and
// SGL, completed in the frame and with the status the kernel saw,
// its capsule reassembled from as many frames, and linked to exactly the
// RDMA bytes moved with its key and the SEND with Invalidate of it; every
// completion matches a command.
func TestNVMeGroundTruth(t *testing.T) {
	for _, name := range []string{"nvmeof_io", "nvmeof_inline_and_queues"} {
		t.Run(name, func(t *testing.T) {
			var want nvmeExpect
			b, err := os.ReadFile("../testdata/ulp/" + name + ".expect.json")
			if err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(b, &want); err != nil {
				t.Fatal(err)
			}
			reqs := map[int]decode.NVMeCMReq{}
			tr := trackFile(t, "../testdata/ulp/"+name+".pcap", flow.Options{KeepULP: true}, 0, func(p *decode.Packet) {
				if u := p.Analysis.ULP; u != nil && u.NVMe.HasCMReq {
					reqs[p.Frame.Number] = u.NVMe.CMReq
				}
			})
			if len(reqs) != len(want.Connections) {
				t.Errorf("%d CM REQs with NVMe-oF private data, want %d", len(reqs), len(want.Connections))
			}
			for _, c := range want.Connections {
				r := reqs[c.Req.Frame]
				if int(r.RecFmt) != c.Req.RecFmt || int(r.QID) != c.Req.QID || int(r.QID) != c.QID || int(r.HRQSize) != c.Req.HRQSize || int(r.HSQSize) != c.Req.HSQSize {
					t.Errorf("CM REQ frame %d: %+v, want %+v", c.Req.Frame, r, c.Req)
				}
			}
			l, ok := tr.ULPLinker(decode.ULPNVMe).(*flow.NVMeLinker)
			if !ok {
				t.Fatal("no NVMe linker")
			}
			if l.Orphans != 0 {
				t.Errorf("%d completions without a command", l.Orphans)
			}
			byFrame := map[int]*flow.NVMeCommand{}
			for _, k := range l.Commands() {
				byFrame[k.Frames[0]] = k // the .expect.json names a capsule's first frame
			}
			if len(l.Commands()) != len(want.Commands) {
				t.Errorf("%d commands, want %d", len(l.Commands()), len(want.Commands))
			}
			for _, w := range want.Commands {
				k := byFrame[w.Frame]
				id := w.Kind + ":" + w.Name + " cid " + strconv.Itoa(w.CID) + " frame " + strconv.Itoa(w.Frame)
				if k == nil {
					t.Errorf("%s: not found", id)
					continue
				}
				c := &k.Cmd
				if int(k.QID) != w.QID || !k.HasQID || int(c.CID) != w.CID || int(c.Opcode) != w.Opcode || c.Name() != nvmeNames[w.Name] {
					t.Errorf("%s: queue %d cid %d opcode %#x %q", id, k.QID, c.CID, c.Opcode, c.Name())
				}
				if (w.Kind == "admin" || w.Kind == "fabrics" && w.QID == 0) != c.Admin && w.Kind != "fabrics" {
					t.Errorf("%s: admin %v", id, c.Admin)
				}
				if w.FCType != nil && int(c.FCType) != *w.FCType {
					t.Errorf("%s: fctype %d, want %d", id, c.FCType, *w.FCType)
				}
				if w.Property != "" && decode.NVMePropertyName(c.PropOffset()) != w.Property {
					t.Errorf("%s: property %q, want %q", id, decode.NVMePropertyName(c.PropOffset()), w.Property)
				}
				if w.Kind != "fabrics" && w.NSID != nil && c.NSID != *w.NSID {
					t.Errorf("%s: nsid %d, want %d", id, c.NSID, *w.NSID)
				}
				if w.SLBA != nil && (!c.HasLBA() || c.SLBA() != *w.SLBA || int(c.NLB()) != *w.NLB0) {
					t.Errorf("%s: slba %d nlb %d, want %d %d", id, c.SLBA(), c.NLB(), *w.SLBA, *w.NLB0)
				}
				if len(k.Frames) != max(w.Wire.CapsuleFrames, 1) || k.Frames[len(k.Frames)-1] != k.Frame {
					t.Errorf("%s: capsule frames %v, want %d, decoded on the last", id, k.Frames, w.Wire.CapsuleFrames)
				}
				switch w.Wire.SGL {
				case "keyed":
					if !c.SGL.Keyed() || int(c.SGL.Len) != w.Wire.SGLLen || uint64(c.SGL.Key) != hexU(t, w.Wire.SGLKey) || c.SGL.Addr != hexU(t, w.Wire.SGLAddr) {
						t.Errorf("%s: SGL %+v, want keyed %d bytes key %s at %s", id, c.SGL, w.Wire.SGLLen, w.Wire.SGLKey, w.Wire.SGLAddr)
					}
				case "in_capsule":
					if !c.SGL.InCapsule() || k.InCapsule != w.Wire.SGLLen {
						t.Errorf("%s: SGL %+v with %d bytes in the capsule, want %d in the capsule", id, c.SGL, k.InCapsule, w.Wire.SGLLen)
					}
				}
				if w.CQEFrame == nil {
					if k.Done {
						t.Errorf("%s: completed in frame %d, want never", id, k.CQEFrame)
					}
				} else if !k.Done || k.CQEFrame != *w.CQEFrame || int(k.CQE.Code()) != w.Status {
					t.Errorf("%s: completion frame %d status %#x, want frame %d status %#x", id, k.CQEFrame, k.CQE.Code(), *w.CQEFrame, w.Status)
				}
				if k.DataBytes != w.Wire.Bytes || (len(k.DataFrames) > 0) != (w.Wire.Bytes > 0) {
					t.Errorf("%s: %d bytes in %d frames, want %d", id, k.DataBytes, len(k.DataFrames), w.Wire.Bytes)
				}
				if len(w.Wire.Ops) == 1 {
					if toHost := w.Wire.Ops[0] == "write"; toHost != k.DataToHost || (len(k.ReadRequests) > 0) == toHost {
						t.Errorf("%s: data to host %v with %d READ requests, want RDMA %s", id, k.DataToHost, len(k.ReadRequests), w.Wire.Ops[0])
					}
				}
				if (w.Wire.InvKey != "") != (k.InvFrame == k.CQEFrame && k.InvFrame != 0) {
					t.Errorf("%s: key invalidated in frame %d, want by the CQE: %q", id, k.InvFrame, w.Wire.InvKey)
				}
			}
			// every data frame belongs to one command only
			seen := map[int]bool{}
			for _, k := range l.Commands() {
				for _, f := range k.DataFrames {
					if seen[f] {
						t.Errorf("frame %d is data of two commands", f)
					}
					seen[f] = true
				}
			}
		})
	}
}

// TestNVMeFindings: each synthetic scenario (internal/synth, NVMeFiles)
// raises exactly its finding, and nothing else, with -d naming the
// target's QP; without it nothing is NVMe and nothing is found.
func TestNVMeFindings(t *testing.T) {
	for _, c := range []struct {
		file string
		want decode.Event
	}{
		{"nvme_error_status.pcap", decode.EventULPError},
		{"nvme_no_completion.pcap", decode.EventULPNoCompletion},
		{"nvme_length_mismatch.pcap", decode.EventULPLength},
		{"nvme_outside_sgl.pcap", decode.EventULPOutside},
		{"nvme_key_after_invalidate.pcap", decode.EventULPKeyInvalidated},
		{"nvme_midstream.pcap", decode.EventULPNoCommand},
	} {
		t.Run(c.file, func(t *testing.T) {
			for _, da := range [][]flow.DecodeAs{nil, {{QP: 0x13, ULP: decode.ULPNVMe}}} {
				var got []decode.Event
				nvme := 0
				trackFile(t, "../testdata/ulp/synth/"+c.file, flow.Options{DecodeAs: da, OnEvent: func(e *flow.Event) { got = append(got, e.Kind) }}, 0, func(p *decode.Packet) {
					if p.Analysis.ULP != nil && p.Analysis.ULP.NVMe.Kind != decode.NVMeNone {
						nvme++
					}
				})
				if da == nil {
					if len(got) != 0 || nvme != 0 {
						t.Errorf("without -d: events %v, %d NVMe packets", got, nvme)
					}
					continue
				}
				if len(got) != 1 || got[0] != c.want {
					t.Errorf("events %v, want exactly %v", got, c.want)
				}
				if nvme == 0 {
					t.Error("no NVMe packet")
				}
			}
		})
	}
}

// TestNVMeMidStream: in a capture that starts while a Read is in flight,
// decode-as finds the next Read whole: command, data and completion
// linked, queue unknown (no Connect, no CM).
func TestNVMeMidStream(t *testing.T) {
	tr := trackFile(t, "../testdata/ulp/synth/nvme_midstream.pcap", flow.Options{KeepULP: true, DecodeAs: []flow.DecodeAs{{QP: 0x13, ULP: decode.ULPNVMe}}}, 0, nil)
	l := tr.ULPLinker(decode.ULPNVMe).(*flow.NVMeLinker)
	cmds := l.Commands()
	if len(cmds) != 1 || l.Orphans != 1 {
		t.Fatalf("%d commands, %d orphan completions; want 1 and 1", len(cmds), l.Orphans)
	}
	k := cmds[0]
	if k.Cmd.Name() != "Read" || k.Cmd.CID != 8 || k.Cmd.SLBA() != 2048 || k.HasQID || !k.Done || k.DataBytes != 512 || len(k.DataFrames) != 1 || k.InvFrame != k.CQEFrame {
		t.Errorf("%+v", k)
	}
}
