package synth

import (
	"encoding/binary"

	"github.com/gopacket/gopacket"

	"github.com/rocetap/rocetap/decode"
)

// Synthetic upper-layer protocol traffic: what the kernel's captures in
// testdata/ulp lack (NFS errors, a call never answered, a reply to no
// call, an RDMA_ERROR) and the ULPs no capture has (iSER, SMB Direct). A
// connection is set up by a CM REQ/REP/RTU whose service ID names the
// ULP's port, as the RDMA CM does, then both sides SEND (each SEND
// acknowledged); MTU 1024.

// ulpConn is an RC connection between A (QP qp[0], the side that
// connects: NFS client, iSCSI initiator, SMB client) and B (qp[1]).
type ulpConn struct {
	b   *fileBuilder
	qp  [2]uint32
	psn [2]uint32
	msn [2]uint32
	// noAcks: the SENDs are not ACKed (an ACK may cover several)
	noAcks bool
}

// frame returns a frame sent by side with t.
func (u *ulpConn) frame(side int, t Transport) RoCEv2 { return RoCEv2{Reverse: side == 1, T: t} }

// cmMAD returns the UD SEND Only to QP1 carrying a CM message.
func cmMAD(attr uint16, cm decode.CM, tid uint64) (Transport, error) {
	mad := decode.MAD{BaseVersion: 1, MgmtClass: 0x07, ClassVersion: 2, Method: 0x03, TransactionID: tid, AttributeID: attr}
	cm.AttributeID = attr
	buf := gopacket.NewSerializeBuffer()
	if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{}, &mad, &cm); err != nil {
		return Transport{}, err
	}
	return Transport{
		BTH:     decode.BTH{Opcode: ud(decode.OpSendOnly), PKey: 0xFFFF, DestQP: 1},
		DETH:    decode.DETH{QKey: 0x80010000, SrcQP: 1},
		Payload: buf.Bytes(),
	}, nil
}

// connect adds the CM REQ, REP and RTU that connect A to B's port. Each
// side's Starting PSN is the one its receive queue expects first (Linux
// ib_cm loads it into rq_psn): the other side's first.
func (u *ulpConn) connect(port uint16, what string) {
	ip := func(a []byte) [16]byte { return [16]byte{10: 0xFF, 11: 0xFF, 12: a[0], 13: a[1], 14: a[2], 15: a[3]} }
	// The RDMA CM's IP header leads the REQ's private data: version 0, IP
	// version 4, source port, source and destination addresses.
	priv := make([]byte, 36)
	priv[1] = 0x40
	binary.BigEndian.PutUint16(priv[2:], 0xC350)
	copy(priv[16:20], ipA)
	copy(priv[32:36], ipB)
	req := decode.CM{LocalCommID: 0x1000 + uint32(port), ServiceID: 0x0000000001060000 | uint64(port), LocalCAGUID: 0x0002c9030000000a,
		LocalQPN: u.qp[0], StartingPSN: decode.PSN(u.psn[1]), ResponderResources: 16, InitiatorDepth: 16, RemoteCMResponseTimeout: 20,
		LocalCMResponseTimeout: 20, RetryCount: 7, PKey: 0xFFFF, PathMTU: 3, RNRRetryCount: 7, MaxCMRetries: 15,
		Primary: decode.CMPath{LocalLID: 0xFFFF, RemoteLID: 0xFFFF, LocalGID: ip(ipA), RemoteGID: ip(ipB), HopLimit: 64, SL: 0, LocalACKTimeout: 18}}
	req.PrivateData = priv
	rep := decode.CM{LocalCommID: 0x2000 + uint32(port), RemoteCommID: req.LocalCommID, LocalCAGUID: 0x0002c9030000000b,
		LocalQPN: u.qp[1], StartingPSN: decode.PSN(u.psn[0]), ResponderResources: 16, InitiatorDepth: 16, RNRRetryCount: 7}
	rtu := decode.CM{LocalCommID: req.LocalCommID, RemoteCommID: rep.LocalCommID}
	for i, m := range []struct {
		attr uint16
		cm   decode.CM
		side int
		note string
	}{{decode.CMAttrREQ, req, 0, "CM REQ to " + what}, {decode.CMAttrREP, rep, 1, "CM REP"}, {decode.CMAttrRTU, rtu, 0, "CM RTU"}} {
		t, err := cmMAD(m.attr, m.cm, 0x77000+uint64(port)<<4)
		if err != nil {
			u.b.err = err
			return
		}
		t.BTH.PSN = decode.PSN(i)
		r := u.b.add(m.note, u.frame(m.side, t))
		r.Want.Has |= decode.HdrMAD | decode.HdrCM
	}
}

// send adds a message SENT by side (one SEND Only, or with Invalidate of
// inv when inv != 0) and the ACK of the other side.
func (u *ulpConn) send(note string, side int, msg []byte, inv uint32) {
	t := Transport{BTH: decode.BTH{Opcode: rc(decode.OpSendOnly), PKey: 0xFFFF, DestQP: u.qp[1-side], PSN: decode.PSN(u.psn[side]), AckReq: true, PadCount: padFor(len(msg))}, Payload: msg}
	if inv != 0 {
		t.BTH.Opcode, t.IETH = rc(decode.OpSendOnlyInv), decode.IETH{RKey: inv}
	}
	u.b.add(note, u.frame(side, t))
	if u.noAcks {
		u.psn[side]++
		u.msn[1-side]++
		return
	}
	u.ack(side)
}

// write adds an RDMA WRITE by side of data to rkey/va, in packets of
// 1024 bytes, and the ACK of its last packet.
func (u *ulpConn) write(note string, side int, rkey uint32, va uint64, data []byte) {
	for off := 0; off < len(data) || off == 0; off += 1024 {
		n := min(1024, len(data)-off)
		first, last := off == 0, off+n >= len(data)
		op := packetOp(writeOps, first, last)
		t := Transport{BTH: decode.BTH{Opcode: rc(op), PKey: 0xFFFF, DestQP: u.qp[1-side], PSN: decode.PSN(u.psn[side]), AckReq: last, PadCount: padFor(n)}, Payload: data[off : off+n]}
		if first {
			t.RETH = reth(va, rkey, uint32(len(data)))
		}
		u.b.add(note, u.frame(side, t))
		if !last {
			u.psn[side]++
		}
	}
	u.ack(side)
}

// ack adds the other side's ACK of side's last request packet.
func (u *ulpConn) ack(side int) {
	u.msn[1-side]++
	t := Transport{BTH: decode.BTH{Opcode: rc(decode.OpAcknowledge), PKey: 0xFFFF, DestQP: u.qp[side], PSN: decode.PSN(u.psn[side])},
		AETH: decode.AETH{Syndrome: 0x1F, MSN: u.msn[1-side]}}
	u.b.add("ACK", u.frame(1-side, t))
	u.psn[side]++
}

// xdrw builds XDR words and opaques.
type xdrw []byte

func (x xdrw) u32(v ...uint32) xdrw {
	for _, w := range v {
		x = binary.BigEndian.AppendUint32(x, w)
	}
	return x
}

func (x xdrw) u64(v uint64) xdrw { return binary.BigEndian.AppendUint64(x, v) }

func (x xdrw) opaque(b []byte) xdrw {
	x = x.u32(uint32(len(b)))
	x = append(x, b...)
	return append(x, make([]byte, padFor(len(b)))...)
}

// RPC-over-RDMA and ONC RPC pieces for nfsErrors.
func rpcrdmaMsg(xid, proc uint32, lists xdrw) xdrw { return xdrw{}.u32(xid, 1, 32, proc).append(lists) }

func (x xdrw) append(b []byte) xdrw { return append(x, b...) }

var noChunks = xdrw{}.u32(0, 0, 0)

// rpcCall is an ONC RPC call with AUTH_NONE credentials.
func rpcCall(xid, prog, vers, proc uint32) xdrw {
	return xdrw{}.u32(xid, 0, 2, prog, vers, proc, 0, 0, 0, 0)
}

// rpcReply is an accepted ONC RPC reply with accept state st.
func rpcReply(xid, st uint32) xdrw { return xdrw{}.u32(xid, 1, 0, 0, 0, st) }

// sequenceArgs are SEQUENCE4args: session, sequence, slot, highest slot,
// cache this.
func sequenceArgs() xdrw {
	return xdrw{}.u32(53).append(make([]byte, 16)).u32(1, 0, 0, 0)
}

// sequenceRes are an OK SEQUENCE4res.
func sequenceRes() xdrw {
	return xdrw{}.u32(53, 0).append(make([]byte, 16)).u32(1, 0, 0, 0, 0)
}

var fh = []byte{1, 0, 1, 0, 0, 0, 0, 0, 0xAB, 0xCD, 0, 0}

// nfsErrors: NFSv4.1 over RDMA (port 20049) with every finding of the RPC
// linker once: an NFS error status, an RPC error, an RDMA_ERROR reply, a
// call never answered, a reply to no call; and a READ whose data the
// server RDMA WRITEs into its write chunk, answered correctly.
func nfsErrors() (File, error) {
	b := newFile("nfs_rdma_errors.pcap", PcapMicro, decode.LinkTypeEthernet)
	u := &ulpConn{b: b, qp: [2]uint32{0x20, 0x21}, psn: [2]uint32{100, 500}}
	u.connect(20049, "NFS over RDMA (port 20049)")
	compound := func(ops ...xdrw) xdrw {
		x := xdrw{}.opaque(nil).u32(1, uint32(len(ops)))
		for _, o := range ops {
			x = x.append(o)
		}
		return x
	}
	compoundRes := func(status uint32, ops ...xdrw) xdrw {
		x := xdrw{}.u32(status).opaque(nil).u32(uint32(len(ops)))
		for _, o := range ops {
			x = x.append(o)
		}
		return x
	}
	putfh := xdrw{}.u32(22).opaque(fh)
	// 1. LOOKUP of a name that does not exist: NFS4ERR_NOENT.
	u.send("NFS call xid=0x101 COMPOUND SEQUENCE PUTFH LOOKUP", 0,
		rpcrdmaMsg(0x101, decode.RPCRDMAMsg, noChunks).append(rpcCall(0x101, 100003, 4, 1)).append(compound(sequenceArgs(), putfh, xdrw{}.u32(15).opaque([]byte("missing")))), 0)
	u.send("NFS reply xid=0x101: LOOKUP NFS4ERR_NOENT", 1,
		rpcrdmaMsg(0x101, decode.RPCRDMAMsg, noChunks).append(rpcReply(0x101, 0)).append(compoundRes(2, sequenceRes(), xdrw{}.u32(22, 0), xdrw{}.u32(15, 2))), 0)
	// 2. A procedure the server lacks: the RPC is not executed.
	u.send("RPC call xid=0x102 NFS procedure 7", 0, rpcrdmaMsg(0x102, decode.RPCRDMAMsg, noChunks).append(rpcCall(0x102, 100003, 4, 7)), 0)
	u.send("RPC reply xid=0x102: PROC_UNAVAIL", 1, rpcrdmaMsg(0x102, decode.RPCRDMAMsg, noChunks).append(rpcReply(0x102, 3)), 0)
	// 3. A call never answered.
	u.send("NFS call xid=0x103 COMPOUND SEQUENCE PUTFH GETATTR, never answered", 0,
		rpcrdmaMsg(0x103, decode.RPCRDMAMsg, noChunks).append(rpcCall(0x103, 100003, 4, 1)).append(compound(sequenceArgs(), putfh, xdrw{}.u32(9, 1, 0x18))), 0)
	// 4. A reply to no call.
	u.send("RPC reply xid=0x1ff to no call", 1, rpcrdmaMsg(0x1ff, decode.RPCRDMAMsg, noChunks).append(rpcReply(0x1ff, 0)), 0)
	// 5. A READ of 2 KiB: the server writes the data into the write chunk
	// (key 0x5501), then replies, invalidating the key.
	writeList := xdrw{}.u32(0, 1, 1, 0x5501, 2048).u64(0x7f0000001000).u32(0, 0)
	u.send("NFS call xid=0x104 COMPOUND SEQUENCE PUTFH READ, write chunk 2048@0x7f0000001000:0x5501", 0,
		rpcrdmaMsg(0x104, decode.RPCRDMAMsg, writeList).append(rpcCall(0x104, 100003, 4, 1)).append(compound(sequenceArgs(), putfh, xdrw{}.u32(25).append(make([]byte, 16)).u64(0).u32(2048))), 0)
	u.write("RDMA WRITE of the READ's data into the write chunk", 1, 0x5501, 0x7f0000001000, payload(2048, 0x42))
	u.send("NFS reply xid=0x104 OK", 1,
		rpcrdmaMsg(0x104, decode.RPCRDMAMsg, writeList).append(rpcReply(0x104, 0)).append(compoundRes(0, sequenceRes(), xdrw{}.u32(22, 0), xdrw{}.u32(25, 0, 1, 2048))), 0x5501)
	// 6. The server speaks another RPC-over-RDMA version: RDMA_ERROR.
	u.send("NFS call xid=0x105 NULL", 0, rpcrdmaMsg(0x105, decode.RPCRDMAMsg, noChunks).append(rpcCall(0x105, 100003, 4, 0)), 0)
	u.send("RDMA_ERROR reply xid=0x105: ERR_VERS 1-1", 1, xdrw{}.u32(0x105, 1, 32, decode.RPCRDMAError, 1, 1, 1), 0)
	return b.done()
}

// iserSMBDirect: an iSER connection (port 3260: Hello, HelloReply, a SCSI
// command with its write and read STags, its response) and an SMB Direct
// connection (port 5445: negotiate request and response, a data transfer
// each way), their headers for tshark to check.
func iserSMBDirect() (File, error) {
	b := newFile("iser_smb_direct.pcap", PcapMicro, decode.LinkTypeEthernet)
	is := &ulpConn{b: b, qp: [2]uint32{0x30, 0x31}, psn: [2]uint32{1000, 2000}}
	is.connect(3260, "iSER (port 3260)")
	bhs := func(op byte) []byte { h := make([]byte, 48); h[0] = op; h[1] = 0x80; return h }
	hello := (&decode.ISER{Flags: decode.ISEROpHello << 4, Version: 0xAA, IRD: 16}).AppendTo(nil)
	is.send("iSER Hello (IRD 16)", 0, append(hello, make([]byte, 48)...), 0)
	reply := (&decode.ISER{Flags: decode.ISEROpHelloReply<<4 | decode.ISERFlagREJ, Version: 0xAA, ORD: 8}).AppendTo(nil)
	is.send("iSER HelloReply (ORD 8, REJ)", 1, append(reply, make([]byte, 48)...), 0)
	cmd := (&decode.ISER{Flags: decode.ISEROpControl<<4 | decode.ISERFlagWSV | decode.ISERFlagRSV, WriteSTag: 0x1234, WriteBaseOffset: 0x7f0000002000,
		ReadSTag: 0x5678, ReadBaseOffset: 0x7f0000003000}).AppendTo(nil)
	is.send("iSER SCSI Command, write and read STags", 0, append(cmd, bhs(0x01)...), 0)
	resp := (&decode.ISER{Flags: decode.ISEROpControl << 4}).AppendTo(nil)
	is.send("iSER SCSI Response", 1, append(resp, bhs(0x21)...), 0)

	sd := &ulpConn{b: b, qp: [2]uint32{0x40, 0x41}, psn: [2]uint32{3000, 4000}}
	sd.connect(5445, "SMB Direct (port 5445)")
	le := func(v ...any) []byte {
		var out []byte
		for _, x := range v {
			switch x := x.(type) {
			case uint16:
				out = binary.LittleEndian.AppendUint16(out, x)
			case uint32:
				out = binary.LittleEndian.AppendUint32(out, x)
			}
		}
		return out
	}
	sd.send("SMB Direct Negotiate Request", 0, le(uint16(0x100), uint16(0x100), uint16(0), uint16(255), uint32(1364), uint32(8192), uint32(1048576)), 0)
	sd.send("SMB Direct Negotiate Response", 1, le(uint16(0x100), uint16(0x100), uint16(0x100), uint16(0), uint16(255), uint16(255), uint32(0), uint32(1048576), uint32(1364), uint32(8192), uint32(1048576)), 0)
	smb2 := append([]byte{0xFE, 'S', 'M', 'B', 64, 0}, make([]byte, 58)...)
	sd.send("SMB Direct data transfer (an SMB2 header), response requested", 0, append(le(uint16(10), uint16(0), uint16(1), uint16(0), uint32(0), uint32(24), uint32(len(smb2)), uint32(0)), smb2...), 0)
	sd.send("SMB Direct data transfer, 4 credits granted, 100 bytes remaining", 1, append(le(uint16(10), uint16(4), uint16(0), uint16(0), uint32(100), uint32(24), uint32(len(smb2)), uint32(0)), smb2...), 0)
	return b.done()
}
