package replay

import (
	"strings"
	"testing"

	"github.com/rocetap/rocetap/decode"
	"github.com/rocetap/rocetap/hca"
)

// lidPacket is a native InfiniBand packet without a GRH: only the LRH's
// LIDs name its nodes.
func lidPacket(frame int, src, dst uint16, op decode.Opcode, destQP uint32, psn decode.PSN) *decode.Packet {
	p := ipPacket(frame, requester, responder, op, destQP, psn)
	p.Has = decode.HdrLRH | decode.HdrBTH
	p.LRH.SLID, p.LRH.DLID = src, dst
	return p
}

// TestLIDResponder: a responder named by its LID gets the requests sent
// to that LID, its responses go back to the requester's LID, and the
// report names both as lid:N.
func TestLIDResponder(t *testing.T) {
	qps := []hca.QPConfig{{QPN: respQP, Type: decode.TransportRC, Remote: &hca.Peer{Addr: decode.NodeLID(1), QPN: reqQP}}}
	wo := decode.Opcode(decode.OpWriteOnly)
	ackTo := func(frame int, dlid uint16, psn decode.PSN, syn uint8, msn uint32) *decode.Packet {
		p := lidPacket(frame, 2, dlid, decode.OpAcknowledge, reqQP, psn)
		p.Has |= decode.HdrAETH
		p.AETH.Syndrome, p.AETH.MSN = syn, msn
		return p
	}
	rep, _ := runSteps(t, Options{Responder: decode.NodeLID(2), QPs: qps}, []step{
		toModel(lidPacket(1, 1, 2, wo, respQP, 5), answers(ack(5, 1))),
		captured(ackTo(2, 1, 5, 0x1F, 1)),
		toModel(lidPacket(3, 1, 2, wo, respQP, 6), answers(ack(6, 2))),
		captured(ackTo(4, 1, 6, 0x62, 1)),                          // diverges
		captured(lidPacket(5, 1, 3, wo, 0x77, 1)),                  // to another LID
		captured(ipPacket(6, requester, responder, wo, respQP, 7)), // the responder's IP address is another node
	})
	if rep.Requests != 2 || rep.CapturedResponses != 2 || rep.Compared != 2 || rep.Ignored.OtherHosts != 2 || rep.Ignored.NoAddress != 0 {
		t.Errorf("requests %d, captured %d, compared %d, ignored %+v", rep.Requests, rep.CapturedResponses, rep.Compared, rep.Ignored)
	}
	checkDivs(t, rep, []wantDiv{{KindSyndrome, 3, 4, []string{"model ACK (0x1f), captured NAK Remote Access Error (0x62)"}, 0, 0}})
	if rep.Responder.String() != "lid:2" || len(rep.Sessions) != 1 || rep.Sessions[0].Name != "QP 0x000011 ← lid:1 QP 0x000012" {
		t.Errorf("responder %v, sessions %+v", rep.Responder, rep.Sessions)
	}
	if got := rep.RequestHosts; len(got) != 2 || got[0] != decode.NodeAddr(responder) || got[1] != decode.NodeLID(3) {
		t.Errorf("request hosts %v", got)
	}
	text := string(rep.AppendText(nil))
	js := string(rep.AppendJSON(nil))
	if !strings.Contains(text, "Responder: lid:2, profile") || !strings.Contains(js, `"responder":"lid:2"`) || !strings.Contains(js, `"addr":"lid:1"`) {
		t.Errorf("text:\n%s\njson:\n%s", text, js)
	}

	// A peer the MPT does not name is learned from the requests, as a
	// LID.
	rep, _ = runSteps(t, Options{Responder: decode.NodeLID(2), QPs: []hca.QPConfig{{QPN: respQP, Type: decode.TransportRC}}}, []step{
		toModel(lidPacket(1, 9, 2, wo, respQP, 5), answers(ack(5, 1))),
		captured(ackTo(2, 9, 5, 0x1F, 1)),
	})
	if rep.Compared != 1 || rep.DivergenceCount != 0 || rep.Sessions[0].Name != "QP 0x000011 ← lid:9 QP 0x000012" {
		t.Errorf("compared %d, divergences %d, sessions %q", rep.Compared, rep.DivergenceCount, rep.Sessions[0].Name)
	}

	// Against the wrong node, the note names the LIDs requests go to.
	rep, _ = runSteps(t, Options{Responder: decode.NodeLID(7), QPs: qps}, []step{
		captured(lidPacket(1, 1, 2, wo, respQP, 5)),
	})
	if notes := strings.Join(rep.Notes(), "\n"); !strings.Contains(notes, "no request in the capture goes to lid:7; its RDMA requests go to lid:2") {
		t.Errorf("notes %q", notes)
	}
}
