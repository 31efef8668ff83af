package flow

import (
	"testing"

	"github.com/rocetap/rocetap/decode"
	"github.com/rocetap/rocetap/internal/synth"
)

// An Identify whose CID is used again before its completion is lost: the
// connection forgets it as the Identify it reads the data of, since its
// place serves the next command (which would otherwise be taken for it).
func TestNVMeIdentifyLostToCIDReuse(t *testing.T) {
	tr := New(Options{})
	l := ulpLinkers[decode.ULPNVMe](tr).(*NVMeLinker)
	c := &ULPConn{ULP: decode.ULPNVMe, Session: 1, t: tr}
	nc := l.conn(c)
	nc.qid, nc.hasQID = 0, true // the admin queue
	var p decode.Packet
	p.Analysis.ULP = &decode.ULPInfo{}
	send := func(frame int, capsule []byte) *NVMeCommand {
		p.Frame.Number = frame
		l.Message(c, &ULPMessage{Data: capsule, Frames: []int{frame}}, &p)
		return nc.pending[uint32(capsule[2])|uint32(capsule[3])<<8]
	}
	ident := send(1, synth.NVMeSQE(0x06, 1, 1, 0x1234, 0x10000, 4096, 0, 0)) // Identify Namespace (CNS 0)
	if ident == nil || nc.identCmd != ident {
		t.Fatalf("Identify not pending as the connection's Identify: %v", nc.identCmd)
	}
	send(2, synth.NVMeSQE(0x02, 1, 0, 0x5678, 0x20000, 512, 0, 0)) // cid 1 again: the Identify is lost
	next := send(3, synth.NVMeSQE(0x02, 2, 0, 0x9abc, 0x30000, 512, 0, 0))
	if next != ident {
		t.Fatal("the lost Identify's place does not serve the next command: this test no longer shows what it is for")
	}
	if nc.identCmd != nil {
		t.Errorf("the connection still reads an Identify (frame %d) after its cid was reused", nc.identCmd.Frame)
	}
}
