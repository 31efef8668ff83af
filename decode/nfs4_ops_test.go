package decode

import (
	"errors"
	"testing"

	"github.com/rocetap/rocetap/internal/testcap"
)

// nfsOpsBodies returns the COMPOUND calls and replies of the synthetic
// capture with every op the kernel's mount lacks (testdata/README.md).
func nfsOpsBodies(t testing.TB) (calls, replies [][]byte) {
	var p Packet
	var r RPCRDMA
	var m RPCMsg
	for _, f := range testcap.ReadPcap(t, "../testdata/synth/nfs4_ops.pcap") {
		p.Frame = Frame{Number: f.Number, Len: len(f.Data)}
		Decode(&p, f.Data, f.LinkType)
		if p.Has&HdrBTH == 0 || !p.BTH.Opcode.Is(PropSend) || p.Has&HdrMAD != 0 || r.Decode(p.Payload) != nil || m.Decode(r.Body) != nil {
			continue
		}
		if body := append([]byte(nil), m.Body...); m.MsgType == RPCCall {
			calls = append(calls, body)
		} else {
			replies = append(replies, body)
		}
	}
	if len(calls) != 5 || len(replies) != 5 {
		t.Fatalf("%d calls, %d replies", len(calls), len(replies))
	}
	return calls, replies
}

// TestNFS4OpsTruncated: every COMPOUND of the synthetic capture decodes
// whole (the last call's op 99 is malformed), and cut at every byte it
// decodes as far as it goes: the ops never more than whole, the error a
// truncation.
func TestNFS4OpsTruncated(t *testing.T) {
	calls, replies := nfsOpsBodies(t)
	var c NFS4Compound
	for i, b := range append(calls, replies...) {
		reply := i >= len(calls)
		decode := func(b []byte) error {
			if reply {
				return c.DecodeReply(b)
			}
			return c.DecodeCall(b)
		}
		err := decode(b)
		whole := len(c.Ops)
		malformed := !reply && i == len(calls)-1
		if malformed != errors.Is(err, ErrMalformed) || !malformed && (err != nil || !c.Complete) {
			t.Fatalf("message %d: %v, %+v", i, err, c)
		}
		for n := range len(b) {
			err := decode(b[:n])
			if !errors.Is(err, ErrTruncated) && !(malformed && errors.Is(err, ErrMalformed)) || len(c.Ops) > whole || c.Complete {
				t.Fatalf("message %d cut at %d of %d: %v, %d ops of %d", i, n, len(b), err, len(c.Ops), whole)
			}
		}
	}
}

// TestNFS4WriteChunkReduced: a READ reply whose data went into a write
// chunk keeps the data's length, not its bytes; the op after it decodes
// when the decoder knows a write chunk was written.
func TestNFS4WriteChunkReduced(t *testing.T) {
	b := be32(0, 0, 3, 22, 0)                // NFS4_OK, tag, 3 ops, PUTFH OK
	b = append(b, be32(25, 0, 1, 4096)...)   // READ OK, eof, 4096 bytes (in the chunk)
	b = append(b, be32(9, 0, 1, 0x18, 0)...) // GETATTR OK {type, change}, no attribute bytes
	var c NFS4Compound
	if err := c.DecodeReply(b); !errors.Is(err, ErrTruncated) || len(c.Ops) != 2 {
		t.Errorf("without the chunk: %v %+v", err, c)
	}
	if err := c.DecodeReplyReduced(b, 1); err != nil || !c.Complete || NFS4OpList(c.Ops) != "PUTFH READ GETATTR" {
		t.Errorf("%v %+v", err, c)
	}
}
