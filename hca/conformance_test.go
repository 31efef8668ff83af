package hca_test

// The model against the kernel: every rxe_scen capture in testdata/rxe is
// fed to the model built from its .mpt.json, and the completions the model
// predicts must be the ones the applications saw (.expect.json).

import (
	"encoding/json"
	"errors"
	"io"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rocetap/rocetap/capture"
	"github.com/rocetap/rocetap/decode"
	"github.com/rocetap/rocetap/hca"
	"github.com/rocetap/rocetap/mpt"
)

type expectFile struct {
	WorkRequests []struct {
		Side, Opcode, Status string
		QPN                  uint32 `json:"qpn"`
		PSNFirst             uint32 `json:"psn_first"`
	} `json:"work_requests"`
	Recv []struct {
		Side, Status string
		QPN          uint32  `json:"qpn"`
		ByteLen      uint64  `json:"byte_len"`
		Imm          *uint32 `json:"imm_data"`
		Inv          *uint32 `json:"invalidated_rkey"`
	} `json:"responder_recv_completions"`
}

// runModel feeds every packet sent to the responder into a model of the
// MPT file and returns all completions, Finish's included.
func runModel(t *testing.T, pcap string, f *mpt.File, prof hca.Profile) []hca.Completion {
	t.Helper()
	m, err := hca.NewModel(&f.Config, hca.Options{Profile: prof})
	if err != nil {
		t.Fatal(err)
	}
	r, err := capture.Open(pcap)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var p decode.Packet
	var out []hca.Completion
	for n := 1; ; n++ {
		data, info, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		p.Frame.Number, p.Frame.Len = n, info.Length
		decode.Decode(&p, data, info.LinkType)
		if decode.NodeAddr(dst(&p)) != f.Responder {
			continue
		}
		out = append(out, m.Receive(&p, info.Timestamp).Completions...)
	}
	return append(out, m.Finish()...)
}

func dst(p *decode.Packet) netip.Addr {
	switch {
	case p.Has&decode.HdrIPv4 != 0:
		return netip.AddrFrom4(p.IPv4.Dst)
	case p.Has&decode.HdrIPv6 != 0:
		return netip.AddrFrom16(p.IPv6.Dst).Unmap()
	}
	return netip.Addr{}
}

func TestCompletionsMatchKernel(t *testing.T) {
	files, _ := filepath.Glob("../testdata/rxe/*.expect.json")
	if len(files) < 19 {
		t.Fatalf("found %d .expect.json files in testdata/rxe, want 19", len(files))
	}
	var nReq, nRecv int
	for _, ef := range files {
		base := strings.TrimSuffix(ef, ".expect.json")
		t.Run(filepath.Base(base), func(t *testing.T) {
			var exp expectFile
			data, err := os.ReadFile(ef)
			if err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(data, &exp); err != nil {
				t.Fatal(err)
			}
			f, err := mpt.Load(base + ".mpt.json")
			if err != nil {
				t.Fatal(err)
			}
			comps := runModel(t, base+".pcap", f, hca.ProfileRXE)

			type key struct {
				qpn uint32
				psn decode.PSN
			}
			req := map[key]hca.Completion{}
			recv := map[uint32][]hca.Completion{}
			for _, c := range comps {
				if c.Requester {
					if _, dup := req[key{c.QPN, c.PSN}]; dup {
						t.Errorf("two requester completions for QP %#x PSN %d", c.QPN, c.PSN)
					}
					req[key{c.QPN, c.PSN}] = c
				} else {
					recv[c.QPN] = append(recv[c.QPN], c)
				}
			}
			onWire := 0
			for _, wr := range exp.WorkRequests {
				if wr.Side != "requester" || wr.Status == "POST_SEND_FAILED" || wr.Status == hca.WCWRFlushErr.String() {
					continue // never on the wire
				}
				onWire++
				nReq++
				c, ok := req[key{wr.QPN, decode.PSN(wr.PSNFirst)}]
				if !ok {
					// The MPT does not name the peer of a QP that never
					// connected: the model cannot know the requester's QPN.
					c, ok = req[key{0, decode.PSN(wr.PSNFirst)}]
				}
				if !ok {
					t.Errorf("%s on QP %#x PSN %d: the model predicts no completion, the application saw %q", wr.Opcode, wr.QPN, wr.PSNFirst, wr.Status)
					continue
				}
				if c.Status.String() != wr.Status {
					t.Errorf("%s on QP %#x PSN %d: model %q, application %q", wr.Opcode, wr.QPN, wr.PSNFirst, c.Status, wr.Status)
				}
			}
			if len(req) != onWire {
				t.Errorf("model predicts %d requester completions, the application had %d work requests on the wire", len(req), onWire)
			}
			next := map[uint32]int{}
			for _, rc := range exp.Recv {
				if rc.Side != "responder" || rc.Status == hca.WCWRFlushErr.String() {
					continue // flushed when the QP was destroyed
				}
				nRecv++
				i := next[rc.QPN]
				next[rc.QPN]++
				if i >= len(recv[rc.QPN]) {
					t.Errorf("receive completion %d on QP %#x (%s, %d bytes): the model predicts none", i, rc.QPN, rc.Status, rc.ByteLen)
					continue
				}
				c := recv[rc.QPN][i]
				if c.Status.String() != rc.Status {
					t.Errorf("receive %d on QP %#x: status model %q, kernel %q", i, rc.QPN, c.Status, rc.Status)
				}
				if rc.Status == "success" && c.ByteLen != rc.ByteLen {
					t.Errorf("receive %d on QP %#x: byte_len model %d, kernel %d", i, rc.QPN, c.ByteLen, rc.ByteLen)
				}
				if (rc.Imm != nil) != c.HasImm || rc.Imm != nil && *rc.Imm != c.Imm {
					t.Errorf("receive %d on QP %#x: immediate model %v/%#x, kernel %v", i, rc.QPN, c.HasImm, c.Imm, rc.Imm)
				}
				if (rc.Inv != nil) != c.HasInv || rc.Inv != nil && *rc.Inv != c.InvRKey {
					t.Errorf("receive %d on QP %#x: invalidated rkey model %v/%#x, kernel %v", i, rc.QPN, c.HasInv, c.InvRKey, rc.Inv)
				}
			}
			for qpn, cs := range recv {
				if len(cs) != next[qpn] {
					t.Errorf("QP %#x: model predicts %d receive completions, the kernel reported %d", qpn, len(cs), next[qpn])
				}
			}
		})
	}
	t.Logf("%d requester and %d receive completions checked", nReq, nRecv)
	if nReq < 60 || nRecv < 25 {
		t.Errorf("only %d requester and %d receive completions checked", nReq, nRecv)
	}
}
