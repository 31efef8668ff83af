package decode

import (
	"bytes"
	"encoding/binary"
	"errors"
	"reflect"
	"testing"

	"github.com/rocetap/rocetap/internal/testcap"
)

// nfsMessages returns the SEND payloads of the kernel's NFS-over-RDMA
// capture (every one a complete RPC-over-RDMA message).
func nfsMessages(t testing.TB) [][]byte {
	var out [][]byte
	var p Packet
	for _, f := range testcap.ReadPcap(t, "../testdata/ulp/nfs_rdma_v41.pcap") {
		Decode(&p, f.Data, f.LinkType)
		if p.Has&HdrBTH != 0 && p.BTH.Opcode.Is(PropSend) && p.Has&HdrMAD == 0 {
			out = append(out, append([]byte(nil), p.Payload...))
		}
	}
	if len(out) != 70 {
		t.Fatalf("%d SEND messages, want 70", len(out))
	}
	return out
}

// be32 builds XDR words.
func be32(v ...uint32) []byte {
	var b []byte
	for _, w := range v {
		b = binary.BigEndian.AppendUint32(b, w)
	}
	return b
}

func TestRPCRDMADecode(t *testing.T) {
	seg := func(h, l uint32, off uint64) []byte {
		return append(be32(h, l), binary.BigEndian.AppendUint64(nil, off)...)
	}
	cat := func(parts ...[]byte) []byte { return bytes.Join(parts, nil) }
	tests := []struct {
		name    string
		in      []byte
		wantErr error
		check   func(t *testing.T, r *RPCRDMA)
	}{
		{"msg no chunks", be32(7, 1, 128, 0, 0, 0, 0, 0xAA), nil, func(t *testing.T, r *RPCRDMA) {
			if r.XID != 7 || r.Credits != 128 || r.HdrLen != 28 || !bytes.Equal(r.Body, be32(0xAA)) {
				t.Errorf("%+v", r)
			}
		}},
		{"read list of two, write list of one chunk of two, reply chunk", cat(be32(1, 1, 32, 0),
			be32(1, 180), seg(0x10, 4096, 0x1000), be32(1, 180), seg(0x11, 100, 0x2000), be32(0),
			be32(1, 2), seg(0x20, 8, 0x3000), seg(0x21, 9, 0x4000), be32(0),
			be32(1, 1), seg(0x30, 500, 0x5000)), nil, func(t *testing.T, r *RPCRDMA) {
			if r.NReads != 2 || len(r.Writes) != 1 || !r.HasReply || len(r.Segs) != 5 {
				t.Fatalf("%+v", r)
			}
			if w := r.ChunkSegs(r.Writes[0]); w[1].Handle != 0x21 || w[1].Length != 9 || w[1].Offset != 0x4000 {
				t.Errorf("write chunk %+v", w)
			}
			if rc := r.ChunkSegs(r.Reply); rc[0].Handle != 0x30 || r.Reply.Count != 1 {
				t.Errorf("reply chunk %+v", rc)
			}
			if rd := r.Reads(); rd[1].Position != 180 || rd[1].Handle != 0x11 {
				t.Errorf("reads %+v", rd)
			}
		}},
		{"nomsg", be32(9, 1, 1, 1, 0, 0, 0), nil, func(t *testing.T, r *RPCRDMA) {
			if r.Proc != RPCRDMANoMsg || len(r.Body) != 0 || !r.ListsDone {
				t.Errorf("%+v", r)
			}
		}},
		{"msgp", be32(9, 1, 1, 2, 4, 1024, 0, 0, 0), nil, func(t *testing.T, r *RPCRDMA) {
			if !r.HasPadding || r.Align != 4 || r.Thresh != 1024 {
				t.Errorf("%+v", r)
			}
		}},
		{"error vers", be32(9, 1, 1, 4, 1, 1, 1), nil, func(t *testing.T, r *RPCRDMA) {
			if !r.HasVers || r.ErrCode != 1 || r.VersLow != 1 || r.VersHigh != 1 {
				t.Errorf("%+v", r)
			}
		}},
		{"error chunk", be32(9, 1, 1, 4, 2), nil, func(t *testing.T, r *RPCRDMA) {
			if !r.HasErrCode || r.HasVers || r.ErrCode != 2 {
				t.Errorf("%+v", r)
			}
		}},
		{"done", be32(9, 1, 1, 3), nil, nil},
		{"version 2", be32(9, 2, 1, 0, 0, 0, 0), ErrMalformed, nil},
		{"procedure 5", be32(9, 1, 1, 5, 0, 0, 0), ErrMalformed, nil},
		{"write chunk count past the end", be32(9, 1, 1, 0, 0, 1, 0xFFFFFFFF), ErrTruncated, nil},
		{"cut in the write list", be32(9, 1, 1, 0, 0, 1), ErrTruncated, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var r RPCRDMA
			err := r.Decode(tt.in)
			if !errors.Is(err, tt.wantErr) || (err == nil) != (tt.wantErr == nil) {
				t.Fatalf("err %v, want %v", err, tt.wantErr)
			}
			if tt.check != nil {
				tt.check(t, &r)
			}
		})
	}
}

// TestULPDecodersTruncated cuts every message of the real capture at every
// byte: no decoder panics, a cut header is ErrTruncated (never a clean
// decode), and what was decoded before the cut agrees with the whole.
func TestULPDecodersTruncated(t *testing.T) {
	var whole, cut RPCRDMA
	var wm, cm RPCMsg
	var wc, cc NFS4Compound
	for _, msg := range nfsMessages(t) {
		if err := whole.Decode(msg); err != nil {
			t.Fatal(err)
		}
		rpcOK := whole.Proc == RPCRDMAMsg && wm.Decode(whole.Body) == nil
		for n := range len(msg) {
			err := cut.Decode(msg[:n])
			if n < whole.HdrLen {
				if !errors.Is(err, ErrTruncated) {
					t.Fatalf("xid %#x cut at %d of a %d-byte header: err %v", whole.XID, n, whole.HdrLen, err)
				}
				if cut.Have == 4 && (cut.XID != whole.XID || cut.Proc != whole.Proc) ||
					len(cut.Segs) > len(whole.Segs) || len(cut.Segs) > 0 && cut.Segs[len(cut.Segs)-1] != whole.Segs[len(cut.Segs)-1] {
					t.Fatalf("xid %#x cut at %d: %+v, whole %+v", whole.XID, n, cut, whole)
				}
				continue
			}
			if err != nil || cut.HdrLen != whole.HdrLen {
				t.Fatalf("xid %#x cut at %d in the body: %v", whole.XID, n, err)
			}
			if !rpcOK {
				continue
			}
			body := msg[whole.HdrLen:n]
			err = cm.Decode(body)
			if (err != nil) != (len(body) < len(whole.Body)-len(wm.Body)) {
				t.Fatalf("xid %#x rpc cut at %d: %v", whole.XID, len(body), err)
			}
			if cm.Have >= rpcHaveType && cm.MsgType != wm.MsgType || cm.Have > wm.Have {
				t.Fatalf("xid %#x rpc cut at %d: %+v, whole %+v", whole.XID, len(body), cm, wm)
			}
			if err != nil || wm.MsgType != RPCCall || wm.Program != NFSProgram || wm.Procedure != NFS4ProcCompound {
				continue
			}
			_ = wc.DecodeCall(wm.Body)
			_ = cc.DecodeCall(cm.Body)
			if len(cc.Ops) > len(wc.Ops) || len(cc.Ops) > 0 && cc.Ops[len(cc.Ops)-1] != wc.Ops[len(cc.Ops)-1] {
				t.Fatalf("xid %#x compound cut at %d: %+v, whole %+v", whole.XID, len(cm.Body), cc.Ops, wc.Ops)
			}
		}
	}
}

func TestRPCMsgDecode(t *testing.T) {
	tests := []struct {
		name    string
		in      []byte
		wantErr error
		want    RPCMsg
	}{
		{"call", be32(5, 0, 2, 100003, 4, 1, 1, 4, 0xAB, 0, 0, 0x77), nil,
			RPCMsg{XID: 5, RPCVersion: 2, Program: 100003, ProgVersion: 4, Procedure: 1, CredFlavor: 1, Have: rpcHaveVerf}},
		{"reply success", be32(5, 1, 0, 0, 0, 0, 0x77), nil, RPCMsg{XID: 5, MsgType: 1, Have: rpcHaveProgVers}},
		{"reply garbage args", be32(5, 1, 0, 0, 0, 4), nil, RPCMsg{XID: 5, MsgType: 1, AcceptStat: 4, Have: rpcHaveProgVers}},
		{"reply prog mismatch", be32(5, 1, 0, 0, 0, 2, 2, 3), nil, RPCMsg{XID: 5, MsgType: 1, AcceptStat: 2, MismatchLow: 2, MismatchHigh: 3, Have: rpcHaveProgVers}},
		{"reply denied auth", be32(5, 1, 1, 1, 5), nil, RPCMsg{XID: 5, MsgType: 1, ReplyStat: 1, RejectStat: 1, AuthStat: 5, Have: rpcHaveProgram}},
		{"reply denied cut", be32(5, 1, 1, 1), ErrTruncated, RPCMsg{XID: 5, MsgType: 1, ReplyStat: 1, RejectStat: 1, Have: rpcHaveProgram}},
		{"cred past the end", be32(5, 0, 2, 100003, 4, 1, 1, 400), ErrTruncated,
			RPCMsg{XID: 5, RPCVersion: 2, Program: 100003, ProgVersion: 4, Procedure: 1, CredFlavor: 1, Have: rpcHaveProcedure}},
		{"type 2", be32(5, 2), ErrMalformed, RPCMsg{XID: 5, MsgType: 2, Have: rpcHaveType}},
		{"reply state 2", be32(5, 1, 2), ErrMalformed, RPCMsg{XID: 5, MsgType: 1, ReplyStat: 2, Have: rpcHaveVersion}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var m RPCMsg
			err := m.Decode(tt.in)
			if !errors.Is(err, tt.wantErr) || (err == nil) != (tt.wantErr == nil) {
				t.Fatalf("err %v, want %v", err, tt.wantErr)
			}
			m.Body = nil
			if !reflect.DeepEqual(m, tt.want) {
				t.Errorf("got %+v\nwant %+v", m, tt.want)
			}
		})
	}
}

func TestNFS4CompoundReplyStops(t *testing.T) {
	// SEQUENCE ok, PUTFH ok, LOOKUP NFS4ERR_NOENT: three ops, the last failed.
	seq := append(be32(0, 0, 0, 0), be32(1, 2, 3, 4, 5)...)
	b := be32(2, 0, 3, 53, 0)
	b = append(b, seq...)
	b = append(b, be32(22, 0, 15, 2)...)
	var c NFS4Compound
	if err := c.DecodeReply(b); err != nil {
		t.Fatal(err)
	}
	want := []NFS4Op{{Opcode: 53, HasStatus: true}, {Opcode: 22, HasStatus: true}, {Opcode: 15, Status: 2, HasStatus: true}}
	if !c.Complete || c.Status != 2 || len(c.Ops) != 3 || c.Ops[0] != want[0] || c.Ops[1] != want[1] || c.Ops[2] != want[2] {
		t.Errorf("%+v", c)
	}
	// An unknown op, or a union arm its XDR does not allow, ends the list
	// with a malformed error.
	b = be32(0, 1, 2, 99, 1, 2)
	if err := c.DecodeCall(b); !errors.Is(err, ErrMalformed) || c.Complete || len(c.Ops) != 1 || c.Ops[0].Opcode != 99 {
		t.Errorf("%v %+v", err, c)
	}
	b = be32(0, 1, 2, 56, 0, 5, 22, 0) // WANT_DELEGATION claim 5 (CLAIM_DELEG_CUR_FH): not a want's
	if err := c.DecodeCall(b); !errors.Is(err, ErrMalformed) || len(c.Ops) != 1 {
		t.Errorf("%v %+v", err, c)
	}
	// A hostile op count: the ops end with the bytes.
	if err := c.DecodeCall(be32(0, 1, 0xFFFFFFFF, 53)); !errors.Is(err, ErrTruncated) || len(c.Ops) != 1 {
		t.Errorf("%v %+v", err, c)
	}
}

func TestISERDecode(t *testing.T) {
	ctl := ISER{Flags: 0x1C, WriteSTag: 0x1234, WriteBaseOffset: 0x1000, ReadSTag: 0x5678, ReadBaseOffset: 0x2000}
	b := append(ctl.AppendTo(nil), 0xEE)
	var h ISER
	if err := h.Decode(b); err != nil || h.WriteSTag != 0x1234 || h.ReadBaseOffset != 0x2000 || h.Opcode() != ISEROpControl || !bytes.Equal(h.Payload, []byte{0xEE}) {
		t.Fatalf("%v %+v", err, h)
	}
	hello := ISER{Flags: 0x20, Version: 0xAA, IRD: 16}
	if err := h.Decode(hello.AppendTo(nil)); err != nil || h.IRD != 16 || h.Version != 0xAA || h.ORD != 0 {
		t.Fatalf("%v %+v", err, h)
	}
	for n := range len(b) {
		err := h.Decode(b[:n])
		if n < ISERHdrLen && !errors.Is(err, ErrTruncated) || n >= ISERHdrLen && err != nil || h.Have != min(n, ISERHdrLen) {
			t.Fatalf("cut at %d: %v %+v", n, err, h)
		}
	}
	if err := h.Decode([]byte{0x40}); !errors.Is(err, ErrMalformed) {
		t.Errorf("opcode 4: %v", err)
	}
}

func TestSMBDirectDecode(t *testing.T) {
	le := func(v ...any) []byte {
		var b []byte
		for _, x := range v {
			switch x := x.(type) {
			case uint16:
				b = binary.LittleEndian.AppendUint16(b, x)
			case uint32:
				b = binary.LittleEndian.AppendUint32(b, x)
			}
		}
		return b
	}
	req := le(uint16(0x100), uint16(0x100), uint16(0), uint16(10), uint32(1364), uint32(8192), uint32(1048576))
	rep := le(uint16(0x100), uint16(0x100), uint16(0x100), uint16(0), uint16(255), uint16(10), uint32(0), uint32(1048576), uint32(1364), uint32(8192), uint32(1048576))
	data := append(le(uint16(10), uint16(1), uint16(1), uint16(0), uint32(0), uint32(24), uint32(4), uint32(0)), 0xFE, 'S', 'M', 'B')
	tests := []struct {
		in   []byte
		kind SMBDirectKind
	}{{req, SMBDirectNegotiateRequest}, {rep, SMBDirectNegotiateResponse}, {data, SMBDirectData}}
	for _, tt := range tests {
		if k := ClassifySMBDirect(tt.in); k != tt.kind {
			t.Errorf("classified %v, want %v", k, tt.kind)
		}
		var m SMBDirect
		if err := m.Decode(tt.in, tt.kind); err != nil {
			t.Fatal(err)
		}
		switch tt.kind {
		case SMBDirectNegotiateRequest:
			if m.CreditsRequested != 10 || m.MaxFragmentedSize != 1048576 {
				t.Errorf("%+v", m)
			}
		case SMBDirectNegotiateResponse:
			if m.NegotiatedVersion != 0x100 || m.CreditsGranted != 10 || m.MaxReadWriteSize != 1048576 {
				t.Errorf("%+v", m)
			}
		case SMBDirectData:
			if m.Flags != 1 || !bytes.Equal(m.Data, []byte{0xFE, 'S', 'M', 'B'}) {
				t.Errorf("%+v", m)
			}
		}
		for n := range len(tt.in) {
			err := m.Decode(tt.in[:n], tt.kind)
			if err == nil && n < len(tt.in) && tt.kind != SMBDirectData {
				t.Fatalf("%v cut at %d: no error", tt.kind, n)
			}
		}
	}
}

func FuzzDecodeRPCRDMA(f *testing.F) {
	for _, m := range nfsMessages(f)[:8] {
		f.Add(m)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var r RPCRDMA
		err := r.Decode(b)
		if err == nil && (!r.ListsDone || r.HdrLen > len(b)) {
			t.Fatalf("%+v", r)
		}
		var m RPCMsg
		if m.Decode(r.Body) == nil && m.Body == nil {
			t.Fatal("complete RPC without a body")
		}
		var c NFS4Compound
		_ = c.DecodeCall(m.Body)
		_ = c.DecodeReply(m.Body)
	})
}

func FuzzDecodeNFS4(f *testing.F) {
	var r RPCRDMA
	var m RPCMsg
	for _, msg := range nfsMessages(f) {
		if r.Decode(msg) == nil && m.Decode(r.Body) == nil && m.MsgType == RPCReply && len(m.Body) > 12 {
			f.Add(true, append([]byte(nil), m.Body...))
		} else if m.Procedure == NFS4ProcCompound {
			f.Add(false, append([]byte(nil), m.Body...))
		}
	}
	calls, replies := nfsOpsBodies(f)
	for _, b := range calls {
		f.Add(false, b)
	}
	for _, b := range replies {
		f.Add(true, b)
	}
	f.Fuzz(func(t *testing.T, reply bool, b []byte) {
		var c NFS4Compound
		if reply {
			_ = c.DecodeReply(b)
		} else {
			_ = c.DecodeCall(b)
		}
		if len(c.Ops) > int(c.Count) || len(c.Ops) > maxNFS4Ops {
			t.Fatalf("%d ops of %d", len(c.Ops), c.Count)
		}
	})
}

func FuzzDecodeISER(f *testing.F) {
	f.Add((&ISER{Flags: 0x1C, WriteSTag: 1, ReadSTag: 2}).AppendTo(nil))
	f.Add((&ISER{Flags: 0x30, Version: 0xAA, ORD: 4}).AppendTo(nil))
	f.Fuzz(func(t *testing.T, b []byte) {
		var h ISER
		if err := h.Decode(b); err == nil && len(b) < ISERHdrLen {
			t.Fatalf("%d bytes decoded without error", len(b))
		}
	})
}

func FuzzDecodeSMBDirect(f *testing.F) {
	f.Add(uint8(1), make([]byte, 20))
	f.Add(uint8(3), append([]byte{1, 0, 1, 0, 1, 0, 0, 0, 0, 0, 0, 0, 24, 0, 0, 0, 4, 0, 0, 0, 0, 0, 0, 0}, 1, 2, 3, 4))
	f.Fuzz(func(t *testing.T, kind uint8, b []byte) {
		var m SMBDirect
		err := m.Decode(b, SMBDirectKind(kind%4))
		if err == nil && len(m.Data) > len(b) {
			t.Fatal("data longer than the message")
		}
		_ = ClassifySMBDirect(b)
	})
}

// TestNFS4ReadChunkReduced: a WRITE whose data RPC-over-RDMA moved to a
// read chunk keeps its length word in the call, not its bytes; the op
// after it decodes when the decoder knows the chunk's position.
func TestNFS4ReadChunkReduced(t *testing.T) {
	b := be32(0, 1, 3, 22, 4, 0xAB)              // tag, minor 1, 3 ops, PUTFH fh(4)
	b = append(b, be32(38, 0, 0, 0, 0, 0, 0)...) // WRITE stateid, offset 0
	b = append(b, be32(2, 8192)...)              // FILE_SYNC, 8192 bytes (in the chunk)
	pos := len(b)
	b = append(b, be32(9, 1, 0x18)...) // GETATTR {type, change}
	var c NFS4Compound
	if err := c.DecodeCall(b); err == nil || len(c.Ops) != 2 {
		t.Errorf("without the position: %v %+v", err, c)
	}
	if err := c.DecodeCallReduced(b, []int{pos}); err != nil || !c.Complete || NFS4OpList(c.Ops) != "PUTFH WRITE GETATTR" {
		t.Errorf("%v %+v", err, c)
	}
}
