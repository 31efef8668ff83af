package synth

import "github.com/rocetap/rocetap/decode"

// An NFSv4.1 long call (RFC 8166, 3.5.3): the client sends an RDMA_NOMSG
// whose position-zero read chunk holds the whole RPC call, the server
// pulls it with an RDMA READ (its responses carry the call) and answers
// inline.

// The opcodes of a message's packets: First, Middle, Last, Only.
var (
	writeOps        = [4]uint8{decode.OpWriteFirst, decode.OpWriteMiddle, decode.OpWriteLast, decode.OpWriteOnly}
	readResponseOps = [4]uint8{decode.OpReadResponseFirst, decode.OpReadResponseMiddle, decode.OpReadResponseLast, decode.OpReadResponseOnly}
)

// packetOp returns the opcode of a packet of a message (ops: First,
// Middle, Last, Only): its first, its last, both or neither.
func packetOp(ops [4]uint8, first, last bool) uint8 {
	switch {
	case first && last:
		return ops[3]
	case first:
		return ops[0]
	case last:
		return ops[2]
	}
	return ops[1]
}

// read adds an RDMA READ by side of data at rkey/va and the other side's
// READ responses (First, Middle..., Last, or Only) of 1024 bytes each.
func (u *ulpConn) read(note string, side int, rkey uint32, va uint64, data []byte) {
	req := u.psn[side]
	t := Transport{BTH: decode.BTH{Opcode: rc(decode.OpReadRequest), PKey: 0xFFFF, DestQP: u.qp[1-side], PSN: decode.PSN(req), AckReq: true},
		RETH: reth(va, rkey, uint32(len(data)))}
	u.b.add(note, u.frame(side, t))
	u.msn[1-side]++
	n := 0
	for off := 0; off < len(data) || off == 0; off += 1024 {
		k := min(1024, len(data)-off)
		first, last := off == 0, off+k >= len(data)
		op := packetOp(readResponseOps, first, last)
		t := Transport{BTH: decode.BTH{Opcode: rc(op), PKey: 0xFFFF, DestQP: u.qp[side], PSN: decode.PSN(req + uint32(n)), PadCount: padFor(k)}, Payload: data[off : off+k]}
		if first || last {
			t.AETH = decode.AETH{Syndrome: 0x1F, MSN: u.msn[1-side]}
		}
		u.b.add("READ response: "+note, u.frame(1-side, t))
		n++
	}
	u.psn[side] += uint32(n)
}

// nfsNoMsg: a CM exchange to port 20049, then xid 0x301, COMPOUND
// SEQUENCE PUTFH SETXATTR (a 1400-byte value) GETATTR sent as a long
// call: RDMA_NOMSG with the call in a position-zero read chunk (key
// 0x7701), the server's RDMA READ of it (two responses), its inline
// reply.
func nfsNoMsg() (File, error) {
	b := newFile("nfs_rdma_nomsg.pcap", PcapMicro, decode.LinkTypeEthernet)
	u := &ulpConn{b: b, qp: [2]uint32{0x40, 0x41}, psn: [2]uint32{300, 900}}
	u.connect(20049, "NFS over RDMA (port 20049)")
	const xid, key, va = 0x301, 0x7701, 0x7f0000004000
	value := payload(1400, 0x61)
	msg := rpcCall(xid, 100003, 4, 1).append(xdrw{}.opaque(nil).u32(1, 4)).append(sequenceArgs()).
		u32(22).opaque(fh).u32(73, 0).opaque([]byte("user.big")).opaque(value).u32(9, 1, 0x18)
	readList := xdrw{}.u32(1, 0, key, uint32(len(msg))).u64(va).u32(0, 0, 0)
	u.send("RDMA_NOMSG call xid=0x301: the RPC call is in the read chunk", 0, rpcrdmaMsg(xid, decode.RPCRDMANoMsg, readList), 0)
	u.read("the server pulls the call", 1, key, va, msg)
	reply := rpcReply(xid, 0).append(xdrw{}.u32(0).opaque(nil).u32(4)).append(sequenceRes()).
		u32(22, 0).u32(73, 0).append(cinfo).u32(9, 0, 0).opaque(nil)
	u.send("NFS reply xid=0x301 NFS4_OK", 1, rpcrdmaMsg(xid, decode.RPCRDMAMsg, noChunks).append(reply), 0)
	return b.done()
}
