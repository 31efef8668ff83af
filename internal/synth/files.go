package synth

import (
	"encoding/binary"
	"fmt"
	"strconv"
	"time"

	"github.com/rocetap/rocetap/decode"
)

// Frame is anything that builds one frame: RoCEv2, RoCEv1, IB, PFC.
type Frame interface {
	Build() ([]byte, decode.LinkType, Want, error)
}

// epoch is the time of the first record of every file.
var epoch = time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC)

// fileBuilder collects the records of one file; the first error sticks.
type fileBuilder struct {
	f    File
	err  error
	next time.Time
	step time.Duration
}

func newFile(name string, format Format, linkType decode.LinkType) *fileBuilder {
	return &fileBuilder{f: File{Name: name, Format: format, LinkType: linkType}, next: epoch, step: 250 * time.Microsecond}
}

// add builds fr and appends it; note says what the frame shows. It returns
// the new record so that the caller can adjust it (the pointer is valid
// until the next add).
func (b *fileBuilder) add(note string, fr Frame) *Record {
	data, link, w, err := fr.Build()
	if err == nil && b.f.Format != PcapNG && link != b.f.LinkType {
		err = fmt.Errorf("frame of link type %d in a file of link type %d", link, b.f.LinkType)
	}
	if err != nil {
		if b.err == nil {
			b.err = wrapErr(b.f.Name, len(b.f.Records), err)
		}
		data = nil
	}
	w.Note = note
	return b.record(data, w)
}

// addERF builds fr and appends it wrapped in an ERF record of type typ.
func (b *fileBuilder) addERF(note string, typ uint8, fr Frame) {
	data, _, w, err := fr.Build()
	if err != nil {
		if b.err == nil {
			b.err = wrapErr(b.f.Name, len(b.f.Records), err)
		}
		return
	}
	w.Note = note
	w.Has |= decode.HdrERF
	b.record(erfRecord(b.next, typ, data), w)
}

func (b *fileBuilder) record(data []byte, w Want) *Record {
	b.f.Records = append(b.f.Records, Record{Time: b.next, Data: data, Len: len(data), Want: w})
	b.next = b.next.Add(b.step)
	return &b.f.Records[len(b.f.Records)-1]
}

// Files returns every synthetic capture file, in a fixed order.
func Files() ([]File, error) {
	builders := []func() (File, error){
		rcAllOpcodes, ucUDRDXRCCNP, vlanQinQIPv6, pfcFile, rocev1File,
		ibNative, ibLIDRC, ibBadVCRC, erfIBEth, sllSLL2Raw, nsTimestamps, truncatedFile, badICRC,
		ibSMP, ibSMPDRTraps, erfIBMAD,
		ibSA, ibSA2, roceSA,
		ipoibIB, ipoibIB0, summaries, // ipoib.go
		nfsErrors, iserSMBDirect,
		ccDCQCN, pfcPauses,
		nfsOps,   // nfs4ops.go
		nfsNoMsg, // nfsnomsg.go
		ibSMPExt, // mad_ext.go
	}
	var out []File
	for _, fn := range builders {
		f, err := fn()
		if err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	return out, nil
}

func (b *fileBuilder) done() (File, error) { return b.f, b.err }

// Opcode shorthands.
func rc(op uint8) decode.Opcode  { return decode.TransportRC.Opcode(op) }
func uc(op uint8) decode.Opcode  { return decode.TransportUC.Opcode(op) }
func rd(op uint8) decode.Opcode  { return decode.TransportRD.Opcode(op) }
func ud(op uint8) decode.Opcode  { return decode.TransportUD.Opcode(op) }
func xrc(op uint8) decode.Opcode { return decode.TransportXRC.Opcode(op) }

// padFor returns the pad count that makes n payload bytes a multiple of 4.
func padFor(n int) uint8 { return uint8(-n & 3) }

// rcConn is one RC connection: requester QP A → responder QP B.
type rcConn struct {
	qpA, qpB uint32
	pkey     uint16
	psn      uint32 // requester's next PSN
	msn      uint32
	v2       RoCEv2 // link/IP settings
}

func (c *rcConn) bth(op decode.Opcode, n int, ack bool) decode.BTH {
	b := decode.BTH{Opcode: op, PKey: c.pkey, DestQP: c.qpB, PSN: decode.PSN(c.psn), PadCount: padFor(n), AckReq: ack}
	c.psn = (c.psn + 1) & 0xFFFFFF
	return b
}

// req returns a request frame of c carrying n payload bytes.
func (c *rcConn) req(op decode.Opcode, n int, ack bool, t Transport) RoCEv2 {
	t.BTH = c.bth(op, n, ack)
	if n > 0 {
		t.Payload = payload(n, byte(t.BTH.PSN))
	}
	s := c.v2
	s.T = t
	return s
}

// resp returns a response frame (B → A) for the request with PSN psn.
func (c *rcConn) resp(op decode.Opcode, psn uint32, n int, t Transport) RoCEv2 {
	t.BTH = decode.BTH{Opcode: op, PKey: c.pkey, DestQP: c.qpA, PSN: decode.PSNOf(psn), PadCount: padFor(n)}
	if n > 0 {
		t.Payload = payload(n, byte(psn)+0x80)
	}
	s := c.v2
	s.Reverse = true
	s.T = t
	return s
}

// ack returns an ACK/NAK for PSN psn with the given syndrome.
func (c *rcConn) ack(psn uint32, syndrome uint8) RoCEv2 {
	if syndrome>>5&3 == decode.AETHAck {
		c.msn++
	}
	return c.resp(rc(decode.OpAcknowledge), psn, 0, Transport{AETH: decode.AETH{Syndrome: syndrome, MSN: c.msn & 0xFFFFFF}})
}

func reth(va uint64, rkey, n uint32) decode.RETH { return decode.RETH{VA: va, RKey: rkey, DMALen: n} }

// rcAllOpcodes: one frame of every RC opcode, RoCEv2 over IPv4, MTU 256,
// with the PSN wrapping from 0xFFFFFx to 0.
func rcAllOpcodes() (File, error) {
	b := newFile("rc_all_opcodes.pcap", PcapMicro, decode.LinkTypeEthernet)
	c := &rcConn{qpA: 0x000012, qpB: 0x000013, pkey: 0xFFFF, psn: 0xFFFFF8, v2: RoCEv2{DSCP: 26, ECN: 2}}
	const va, rkey = 0x00007f3a1c000000, 0x1a2b3c04
	rsp := func(note string, s RoCEv2) { b.add(note, s) }

	// SEND First/Middle/Last, Last with Immediate, Only, Only with Immediate.
	b.add("SEND First, 256 B (MTU 256)", c.req(rc(decode.OpSendFirst), 256, false, Transport{}))
	b.add("SEND Middle, 256 B", c.req(rc(decode.OpSendMiddle), 256, false, Transport{}))
	p := c.psn
	b.add("SEND Last, 13 B, pad 3, AckReq", c.req(rc(decode.OpSendLast), 13, true, Transport{}))
	rsp("ACK (credits unlimited)", c.ack(p, 0x1F))
	b.add("SEND First, 256 B", c.req(rc(decode.OpSendFirst), 256, false, Transport{}))
	p = c.psn
	b.add("SEND Last with Immediate, 14 B, pad 2", c.req(rc(decode.OpSendLastImm), 14, true, Transport{ImmDt: decode.ImmDt{Data: 0xdeadbeef}}))
	rsp("ACK (PSN wrapped past 0xFFFFFF)", c.ack(p, 0x1F))
	b.add("SEND Only, 0 B (the frame is padded to 60 bytes)", c.req(rc(decode.OpSendOnly), 0, false, Transport{}))
	p = c.psn
	b.add("SEND Only with Immediate, 1 B, pad 3", c.req(rc(decode.OpSendOnlyImm), 1, true, Transport{ImmDt: decode.ImmDt{Data: 0x00000001}}))
	rsp("ACK with credit code 10 (32 credits)", c.ack(p, 0x0A))

	// RDMA WRITE.
	b.add("WRITE First, RETH len 600", c.req(rc(decode.OpWriteFirst), 256, false, Transport{RETH: reth(va, rkey, 600)}))
	b.add("WRITE Middle", c.req(rc(decode.OpWriteMiddle), 256, false, Transport{}))
	p = c.psn
	b.add("WRITE Last, 88 B", c.req(rc(decode.OpWriteLast), 88, true, Transport{}))
	rsp("ACK", c.ack(p, 0x1F))
	b.add("WRITE First, RETH len 263", c.req(rc(decode.OpWriteFirst), 256, false, Transport{RETH: reth(va+0x1000, rkey, 263)}))
	p = c.psn
	b.add("WRITE Last with Immediate, 7 B, pad 1", c.req(rc(decode.OpWriteLastImm), 7, true, Transport{ImmDt: decode.ImmDt{Data: 0x12345678}}))
	rsp("RNR NAK, timer code 1 (0.01 ms)", c.ack(p, 0x21))
	b.add("WRITE Only, RETH len 64", c.req(rc(decode.OpWriteOnly), 64, false, Transport{RETH: reth(va+0x2000, rkey, 64)}))
	p = c.psn
	b.add("WRITE Only with Immediate, RETH len 5, 5 B, pad 3", c.req(rc(decode.OpWriteOnlyImm), 5, true, Transport{RETH: reth(va+0x2040, rkey, 5), ImmDt: decode.ImmDt{Data: 0xfeedf00d}}))
	rsp("RNR NAK, timer code 14 (1.92 ms)", c.ack(p, 0x2E))
	p = c.psn
	b.add("WRITE Only, RETH len 0, no payload", c.req(rc(decode.OpWriteOnly), 0, true, Transport{RETH: reth(0, 0, 0)}))
	rsp("NAK PSN Sequence Error", c.ack(p, 0x60))

	// RDMA READ: 700 bytes = 3 responses; 6 bytes = READ Response Only.
	p = c.psn
	b.add("READ Request, RETH len 700 (3 PSNs)", c.req(rc(decode.OpReadRequest), 0, true, Transport{RETH: reth(va+0x3000, rkey, 700)}))
	c.psn = (c.psn + 2) & 0xFFFFFF
	c.msn++
	rsp("READ Response First, 256 B", c.resp(rc(decode.OpReadResponseFirst), p, 256, Transport{AETH: decode.AETH{Syndrome: 0x1F, MSN: c.msn}}))
	rsp("READ Response Middle, 256 B", c.resp(rc(decode.OpReadResponseMiddle), p+1, 256, Transport{}))
	rsp("READ Response Last, 188 B", c.resp(rc(decode.OpReadResponseLast), p+2, 188, Transport{AETH: decode.AETH{Syndrome: 0x1F, MSN: c.msn}}))
	p = c.psn
	b.add("READ Request, RETH len 6", c.req(rc(decode.OpReadRequest), 0, true, Transport{RETH: reth(va+0x3400, rkey, 6)}))
	c.msn++
	rsp("READ Response Only, 6 B, pad 2", c.resp(rc(decode.OpReadResponseOnly), p, 6, Transport{AETH: decode.AETH{Syndrome: 0x1F, MSN: c.msn}}))

	// Atomics.
	p = c.psn
	b.add("Compare Swap", c.req(rc(decode.OpCompareSwap), 0, true, Transport{AtomicETH: decode.AtomicETH{VA: va + 0x4000, RKey: rkey, SwapAddData: 0x1111222233334444, CompareData: 0}}))
	c.msn++
	rsp("ATOMIC Acknowledge, original 0", c.resp(rc(decode.OpAtomicAcknowledge), p, 0, Transport{AETH: decode.AETH{Syndrome: 0x1F, MSN: c.msn}, AtomicAckETH: decode.AtomicAckETH{OrigRemData: 0}}))
	p = c.psn
	b.add("Fetch Add", c.req(rc(decode.OpFetchAdd), 0, true, Transport{AtomicETH: decode.AtomicETH{VA: va + 0x4008, RKey: rkey, SwapAddData: 1}}))
	c.msn++
	rsp("ATOMIC Acknowledge, original 41", c.resp(rc(decode.OpAtomicAcknowledge), p, 0, Transport{AETH: decode.AETH{Syndrome: 0x1F, MSN: c.msn}, AtomicAckETH: decode.AtomicAckETH{OrigRemData: 41}}))

	// SEND with Invalidate.
	b.add("SEND First", c.req(rc(decode.OpSendFirst), 256, false, Transport{}))
	p = c.psn
	b.add("SEND Last with Invalidate, 100 B, IETH", c.req(rc(decode.OpSendLastInv), 100, true, Transport{IETH: decode.IETH{RKey: 0x00a1b2c3}}))
	rsp("NAK Invalid Request", c.ack(p, 0x61))
	p = c.psn
	b.add("SEND Only with Invalidate, 2 B, pad 2", c.req(rc(decode.OpSendOnlyInv), 2, true, Transport{IETH: decode.IETH{RKey: rkey}}))
	rsp("NAK Remote Access Error", c.ack(p, 0x62))

	// FLUSH and ATOMIC WRITE (IBA 1.5 memory placement extensions); the
	// responder answers both with a 0-byte READ Response Only.
	p = c.psn
	b.add("FLUSH, FETH (selectivity 0, placement 1) + RETH len 4096", c.req(rc(decode.OpFlush), 0, true, Transport{FETH: decode.FETH{Selectivity: 0, Placement: 1}, RETH: reth(va, rkey, 4096)}))
	c.msn++
	rsp("READ Response Only, 0 B (FLUSH done)", c.resp(rc(decode.OpReadResponseOnly), p, 0, Transport{AETH: decode.AETH{Syndrome: 0x1F, MSN: c.msn}}))
	p = c.psn
	b.add("ATOMIC WRITE, RETH len 8 + 8 B payload", c.req(rc(decode.OpAtomicWrite), 8, true, Transport{RETH: reth(va+0x5000, rkey, 8)}))
	rsp("NAK Remote Operational Error", c.ack(p, 0x63))
	p = c.psn
	b.add("SEND Only, 4 B", c.req(rc(decode.OpSendOnly), 4, true, Transport{}))
	rsp("NAK Invalid RD Request (code 4)", c.ack(p, 0x64))
	return b.done()
}

// ucUDRDXRCCNP: the other transports, CNP, unknown opcodes and ECN marks.
func ucUDRDXRCCNP() (File, error) {
	b := newFile("uc_ud_rd_xrc_cnp.pcap", PcapMicro, decode.LinkTypeEthernet)
	// UC, ECT(0) with a CE mark on one frame.
	u := &rcConn{qpA: 0x0002A1, qpB: 0x0002A2, pkey: 0x8001, psn: 0x7FFFFE, v2: RoCEv2{DSCP: 26, ECN: 2}}
	b.add("UC SEND First", u.req(uc(decode.OpSendFirst), 256, false, Transport{}))
	b.add("UC SEND Middle", u.req(uc(decode.OpSendMiddle), 256, false, Transport{}))
	b.add("UC SEND Last, 10 B, pad 2", u.req(uc(decode.OpSendLast), 10, false, Transport{}))
	b.add("UC SEND First", u.req(uc(decode.OpSendFirst), 256, false, Transport{}))
	ce := u.req(uc(decode.OpSendLastImm), 3, false, Transport{ImmDt: decode.ImmDt{Data: 7}})
	ce.ECN = 3
	b.add("UC SEND Last with Immediate, ECN CE", ce)
	b.add("UC SEND Only, 17 B", u.req(uc(decode.OpSendOnly), 17, false, Transport{}))
	b.add("UC SEND Only with Immediate, 0 B", u.req(uc(decode.OpSendOnlyImm), 0, false, Transport{ImmDt: decode.ImmDt{Data: 0xabcdef01}}))
	b.add("UC WRITE First, RETH len 520", u.req(uc(decode.OpWriteFirst), 256, false, Transport{RETH: reth(0x1000, 0x5501, 520)}))
	b.add("UC WRITE Middle", u.req(uc(decode.OpWriteMiddle), 256, false, Transport{}))
	b.add("UC WRITE Last, 8 B", u.req(uc(decode.OpWriteLast), 8, false, Transport{}))
	b.add("UC WRITE First, RETH len 300", u.req(uc(decode.OpWriteFirst), 256, false, Transport{RETH: reth(0x2000, 0x5501, 300)}))
	b.add("UC WRITE Last with Immediate, 44 B", u.req(uc(decode.OpWriteLastImm), 44, false, Transport{ImmDt: decode.ImmDt{Data: 2}}))
	e1 := u.req(uc(decode.OpWriteOnly), 33, false, Transport{RETH: reth(0x3000, 0x5501, 33)})
	e1.ECN = 1
	b.add("UC WRITE Only, 33 B, pad 3, ECN ECT(1)", e1)
	b.add("UC WRITE Only with Immediate, RETH len 0", u.req(uc(decode.OpWriteOnlyImm), 0, false, Transport{RETH: reth(0, 0, 0), ImmDt: decode.ImmDt{Data: 3}}))

	// UD.
	udFrame := func(op decode.Opcode, dqp, qkey, sqp, psn uint32, pl []byte, ecn uint8) RoCEv2 {
		return RoCEv2{ECN: ecn, T: Transport{
			BTH:     decode.BTH{Opcode: op, PKey: 0xFFFF, DestQP: dqp, PSN: decode.PSN(psn), PadCount: padFor(len(pl)), SE: true},
			DETH:    decode.DETH{QKey: qkey, SrcQP: sqp},
			ImmDt:   decode.ImmDt{Data: 0x0badcafe},
			Payload: pl,
		}}
	}
	b.add("UD SEND Only, 64 B", udFrame(ud(decode.OpSendOnly), 0x0ABCDE, 0x11111111, 0x000345, 0xFFFFFF, payload(64, 1), 0))
	b.add("UD SEND Only with Immediate, 0 B, ECN CE", udFrame(ud(decode.OpSendOnlyImm), 0x0ABCDE, 0x11111111, 0x000345, 0, nil, 3))
	// A payload that looks like a CM MAD (base version 1, class 0x07, class
	// version 2, ConnectRequest) sent from QP 0x103 to QP 0x102, neither
	// QP0 nor QP1: it is payload, not a MAD.
	mad := make([]byte, 256)
	copy(mad, []byte{0x01, 0x07, 0x02, 0x03, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x12, 0x34, 0x00, 0x10, 0, 0, 0, 0, 0, 0})
	b.add("UD SEND Only from QP 0x103 to QP 0x102 with a MAD-looking payload (not QP0/1: payload, not a MAD)",
		udFrame(ud(decode.OpSendOnly), 0x000102, 0x80010000, 0x000103, 0x000010, mad, 0))

	// RD: RDETH (+ DETH on requests).
	const ee = 0x000777
	rdReq := func(op decode.Opcode, psn uint32, n int, t Transport) RoCEv2 {
		t.BTH = decode.BTH{Opcode: op, PKey: 0x7FFF, DestQP: 0x000501, PSN: decode.PSN(psn), PadCount: padFor(n), AckReq: true}
		t.RDETH = decode.RDETH{EECnxt: ee}
		t.DETH = decode.DETH{QKey: 0x22222222, SrcQP: 0x000502}
		if n > 0 {
			t.Payload = payload(n, byte(psn))
		}
		return RoCEv2{T: t}
	}
	rdResp := func(op decode.Opcode, psn uint32, n int, t Transport) RoCEv2 {
		t.BTH = decode.BTH{Opcode: op, PKey: 0x7FFF, DestQP: 0x000502, PSN: decode.PSN(psn), PadCount: padFor(n)}
		t.RDETH = decode.RDETH{EECnxt: ee}
		if n > 0 {
			t.Payload = payload(n, byte(psn))
		}
		return RoCEv2{Reverse: true, T: t}
	}
	b.add("RD SEND Only, RDETH + DETH, 32 B", rdReq(rd(decode.OpSendOnly), 100, 32, Transport{}))
	b.add("RD ACK, RDETH + AETH", rdResp(rd(decode.OpAcknowledge), 100, 0, Transport{AETH: decode.AETH{Syndrome: 0x1F, MSN: 1}}))
	b.add("RD SEND Only with Immediate, RDETH + DETH + ImmDt", rdReq(rd(decode.OpSendOnlyImm), 101, 5, Transport{ImmDt: decode.ImmDt{Data: 5}}))
	b.add("RD WRITE Only, RDETH + DETH + RETH", rdReq(rd(decode.OpWriteOnly), 102, 16, Transport{RETH: reth(0x8000, 0x77, 16)}))
	b.add("RD READ Request, RDETH + DETH + RETH", rdReq(rd(decode.OpReadRequest), 103, 0, Transport{RETH: reth(0x8000, 0x77, 16)}))
	b.add("RD READ Response Only, RDETH + AETH", rdResp(rd(decode.OpReadResponseOnly), 103, 16, Transport{AETH: decode.AETH{Syndrome: 0x1F, MSN: 3}}))
	b.add("RD Compare Swap, RDETH + DETH + AtomicETH", rdReq(rd(decode.OpCompareSwap), 104, 0, Transport{AtomicETH: decode.AtomicETH{VA: 0x8010, RKey: 0x77, SwapAddData: 9, CompareData: 8}}))
	b.add("RD ATOMIC Acknowledge, RDETH + AETH + AtomicAckETH", rdResp(rd(decode.OpAtomicAcknowledge), 104, 0, Transport{AETH: decode.AETH{Syndrome: 0x1F, MSN: 4}, AtomicAckETH: decode.AtomicAckETH{OrigRemData: 8}}))
	b.add("RD RESYNC, RDETH + DETH", rdReq(rd(decode.OpResync), 105, 0, Transport{}))

	// XRC: XRCETH first on requests only.
	x := &rcConn{qpA: 0x000900, qpB: 0x000901, pkey: 0x8123, psn: 0x000ABC}
	xreq := func(note string, op decode.Opcode, n int, t Transport) uint32 {
		t.XRCETH = decode.XRCETH{XRCSRQ: 0x000099}
		p := x.psn
		b.add(note, x.req(op, n, true, t))
		return p
	}
	p := xreq("XRC SEND Only, XRCETH, 40 B", xrc(decode.OpSendOnly), 40, Transport{})
	b.add("XRC ACK (no XRCETH on responses)", x.resp(xrc(decode.OpAcknowledge), p, 0, Transport{AETH: decode.AETH{Syndrome: 0x1F, MSN: 1}}))
	xreq("XRC SEND Only with Immediate, XRCETH + ImmDt", xrc(decode.OpSendOnlyImm), 9, Transport{ImmDt: decode.ImmDt{Data: 9}})
	xreq("XRC WRITE Only, XRCETH + RETH", xrc(decode.OpWriteOnly), 24, Transport{RETH: reth(0x9000, 0x99, 24)})
	p = xreq("XRC READ Request, XRCETH + RETH", xrc(decode.OpReadRequest), 0, Transport{RETH: reth(0x9000, 0x99, 24)})
	b.add("XRC READ Response Only, AETH", x.resp(xrc(decode.OpReadResponseOnly), p, 24, Transport{AETH: decode.AETH{Syndrome: 0x1F, MSN: 4}}))
	p = xreq("XRC Fetch Add, XRCETH + AtomicETH", xrc(decode.OpFetchAdd), 0, Transport{AtomicETH: decode.AtomicETH{VA: 0x9100, RKey: 0x99, SwapAddData: 5}})
	ack := x.resp(xrc(decode.OpAtomicAcknowledge), p, 0, Transport{AETH: decode.AETH{Syndrome: 0x1F, MSN: 5}, AtomicAckETH: decode.AtomicAckETH{OrigRemData: 10}})
	ack.ECN = 3
	b.add("XRC ATOMIC Acknowledge, ECN CE", ack)
	xreq("XRC SEND Only with Invalidate, XRCETH + IETH", xrc(decode.OpSendOnlyInv), 4, Transport{IETH: decode.IETH{RKey: 0x99}})

	// CNP: opcode 0x81, BECN set, 16 reserved bytes, sent by the notification
	// point (B) to the requester's QP, DSCP 48.
	cnp := func(v6 bool) RoCEv2 {
		return RoCEv2{IPv6: v6, Reverse: true, DSCP: 48, UDPChecksum: v6, T: Transport{
			BTH: decode.BTH{Opcode: decode.CNP, PKey: 0xFFFF, BECN: true, DestQP: 0x000012},
		}}
	}
	b.add("CNP over IPv4 (BECN, 16 reserved bytes, DSCP 48)", cnp(false))
	b.add("CNP over IPv6", cnp(true))

	// Opcodes the IBTA does not define: decoded up to the BTH.
	b.add("unknown opcode 0x1A (RC reserved), 20 B after BTH", RoCEv2{T: Transport{
		BTH: decode.BTH{Opcode: 0x1A, PKey: 0xFFFF, DestQP: 0x13, PSN: 0x500}, Payload: payload(20, 3)}})
	b.add("unknown opcode 0xE5 (manufacturer specific), 12 B after BTH", RoCEv2{ECN: 1, T: Transport{
		BTH: decode.BTH{Opcode: 0xE5, PKey: 0xFFFF, DestQP: 0x13, PSN: 0x501}, Payload: payload(12, 4)}})
	return b.done()
}

// vlanQinQIPv6: tagged and IPv6 RoCEv2, odd UDP source ports, plain UDP.
func vlanQinQIPv6() (File, error) {
	b := newFile("vlan_qinq_ipv6.pcap", PcapMicro, decode.LinkTypeEthernet)
	c := &rcConn{qpA: 0x00D001, qpB: 0x00D002, pkey: 0xFFFF, psn: 0x123456}
	dot1q := []VLAN{{TPID: 0x8100, ID: 100, Priority: 3}}
	qinq := []VLAN{{TPID: 0x88A8, ID: 10, Priority: 5}, {TPID: 0x8100, ID: 20, Priority: 3}}

	c.v2 = RoCEv2{VLANs: dot1q, ECN: 2}
	p := c.psn
	b.add("802.1Q VLAN 100 prio 3, IPv4, SEND Only", c.req(rc(decode.OpSendOnly), 48, true, Transport{}))
	b.add("802.1Q VLAN 100, IPv4, ACK", c.ack(p, 0x1F))
	c.v2 = RoCEv2{VLANs: []VLAN{{TPID: 0x8100, ID: 4094}}, IPv6: true, ECN: 1, Flow: 0x12345, UDPChecksum: true}
	p = c.psn
	b.add("802.1Q VLAN 4094, IPv6 (flow label 0x12345, ECT(1)), WRITE Only", c.req(rc(decode.OpWriteOnly), 30, true, Transport{RETH: reth(0xA000, 0x4242, 30)}))
	b.add("802.1Q VLAN 4094, IPv6, ACK", c.ack(p, 0x1F))
	c.v2 = RoCEv2{VLANs: qinq, ECN: 2}
	p = c.psn
	b.add("QinQ 0x88a8 VLAN 10 + 0x8100 VLAN 20, IPv4, READ Request", c.req(rc(decode.OpReadRequest), 0, true, Transport{RETH: reth(0xB000, 0x4242, 12)}))
	c.msn++
	b.add("QinQ, IPv4, READ Response Only", c.resp(rc(decode.OpReadResponseOnly), p, 12, Transport{AETH: decode.AETH{Syndrome: 0x1F, MSN: c.msn}}))
	c.v2 = RoCEv2{VLANs: qinq, IPv6: true, DSCP: 26, ECN: 3, Flow: 0xFFFFF, TTL: 1, UDPChecksum: true}
	b.add("QinQ, IPv6 (flow label 0xFFFFF, hop limit 1, CE), SEND Only with Immediate", c.req(rc(decode.OpSendOnlyImm), 7, false, Transport{ImmDt: decode.ImmDt{Data: 1}}))
	c.v2 = RoCEv2{IPv6: true, DSCP: 46, ECN: 2, Flow: 0}
	b.add("untagged IPv6, UDP checksum 0 (as rxe sends it), SEND Only", c.req(rc(decode.OpSendOnly), 100, false, Transport{}))
	c.v2 = RoCEv2{SrcPort: 53, ECN: 2}
	b.add("IPv4, UDP source port 53 (DNS), destination 4791: RoCEv2", c.req(rc(decode.OpSendOnly), 8, false, Transport{}))
	c.v2 = RoCEv2{SrcPort: 4791, ECN: 2}
	b.add("IPv4, UDP source port 4791, destination 4791: RoCEv2", c.req(rc(decode.OpSendOnly), 8, false, Transport{}))
	b.add("IPv4, UDP to port 4792: not RoCE", RoCEv2{SrcPort: 50000, DstPort: 4792, T: Transport{Payload: payload(24, 9)}})
	return b.done()
}

// pfcFile: 802.3x PFC and PAUSE frames.
func pfcFile() (File, error) {
	b := newFile("pfc.pcap", PcapMicro, decode.LinkTypeEthernet)
	b.add("PFC XOFF priority 3, quanta 0xFFFF", PFC{ClassEnable: 0x08, Quanta: [8]uint16{3: 0xFFFF}})
	b.add("PFC XON priority 3 (quanta 0)", PFC{ClassEnable: 0x08})
	b.add("PFC priorities 3 and 4", PFC{ClassEnable: 0x18, Quanta: [8]uint16{3: 0x1000, 4: 0x2000}})
	b.add("PFC all eight priorities", PFC{ClassEnable: 0xFF, Quanta: [8]uint16{1, 2, 0x80, 0x100, 0x7FFF, 0x8000, 0xFFFE, 0xFFFF}})
	b.add("PAUSE, 0x1234 quanta", PFC{Pause: true, Quanta: [8]uint16{0x1234}})
	b.add("PAUSE 0 (resume)", PFC{Pause: true})
	return b.done()
}

// rocev1File: RoCEv1, EtherType 0x8915.
func rocev1File() (File, error) {
	b := newFile("rocev1.pcap", PcapMicro, decode.LinkTypeEthernet)
	c := &rcConn{qpA: 0x000041, qpB: 0x000042, pkey: 0xFFFF, psn: 0xFFFFFE}
	v1 := func(s RoCEv2, vlans []VLAN) RoCEv1 {
		return RoCEv1{VLANs: vlans, Reverse: s.Reverse, TrafficClass: 0x68, FlowLabel: 0x0ABCD, HopLimit: 1, T: s.T}
	}
	p := c.psn
	b.add("RoCEv1 RC SEND Only", v1(c.req(rc(decode.OpSendOnly), 21, true, Transport{}), nil))
	b.add("RoCEv1 ACK", v1(c.ack(p, 0x1F), nil))
	p = c.psn
	write := c.req(rc(decode.OpWriteOnly), 64, true, Transport{RETH: reth(0xC000, 0x1111, 64)})
	b.add("RoCEv1 WRITE Only", v1(write, nil))
	b.add("RoCEv1 ACK (PSN 0)", v1(c.ack(p, 0x1F), nil))
	p = c.psn
	b.add("RoCEv1 over 802.1Q VLAN 7: READ Request", v1(c.req(rc(decode.OpReadRequest), 0, true, Transport{RETH: reth(0xC000, 0x1111, 3)}), []VLAN{{TPID: 0x8100, ID: 7, Priority: 3}}))
	c.msn++
	// The READ returns the first 3 bytes the WRITE stored there, as a
	// responder must.
	read := c.resp(rc(decode.OpReadResponseOnly), p, 3, Transport{AETH: decode.AETH{Syndrome: 0x1F, MSN: c.msn}})
	read.T.Payload = write.T.Payload[:3]
	b.add("RoCEv1 over 802.1Q VLAN 7: READ Response Only, 3 B, pad 1", v1(read, []VLAN{{TPID: 0x8100, ID: 7, Priority: 3}}))
	b.add("RoCEv1 UD SEND Only", RoCEv1{HopLimit: 64, T: Transport{
		BTH:  decode.BTH{Opcode: ud(decode.OpSendOnly), PKey: 0xFFFF, DestQP: 0x000777, PSN: 0x10},
		DETH: decode.DETH{QKey: 0x12345678, SrcQP: 0x000778}, Payload: payload(40, 5)}})
	return b.done()
}

func ibLRH(vl, sl uint8, dlid, slid uint16) decode.LRH {
	return decode.LRH{VL: vl, SL: sl, DLID: dlid, SLID: slid}
}

// ibNative: native InfiniBand packets (link type 247).
func ibNative() (File, error) {
	b := newFile("ib_native.pcap", PcapMicro, decode.LinkTypeInfiniBand)
	c := &rcConn{qpA: 0x000048, qpB: 0x000049, pkey: 0xFFFF, psn: 0xFFFFFE}
	local := func(s RoCEv2) IB {
		l := ibLRH(0, 0, 0x0002, 0x0001)
		if s.Reverse {
			l = ibLRH(0, 0, 0x0001, 0x0002)
		}
		return IB{LRH: l, T: s.T}
	}
	p := c.psn
	b.add("LNH 2 (local): RC SEND Only, 32 B", local(c.req(rc(decode.OpSendOnly), 32, true, Transport{})))
	b.add("LNH 2: RC ACK", local(c.ack(p, 0x1F)))
	b.add("LNH 2: RC WRITE First, RETH len 300", local(c.req(rc(decode.OpWriteFirst), 256, false, Transport{RETH: reth(0xD000, 0x2222, 300)})))
	p = c.psn
	b.add("LNH 2: RC WRITE Last, 44 B (PSN wrapped to 0)", local(c.req(rc(decode.OpWriteLast), 44, true, Transport{})))
	b.add("LNH 2: RC ACK", local(c.ack(p, 0x1F)))
	// A subnet management packet: VL15, QP0, SubnGet(NodeInfo).
	smp := make([]byte, 256)
	copy(smp, []byte{0x01, 0x01, 0x01, 0x01, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x2a, 0x00, 0x11, 0, 0, 0, 0, 0, 0})
	r := b.add("LNH 2: VL15 SMP to QP0, SubnGet(NodeInfo)", IB{LRH: ibLRH(15, 0, 0x0002, 0x0001), T: Transport{
		BTH:  decode.BTH{Opcode: ud(decode.OpSendOnly), PKey: 0xFFFF, DestQP: 0, PSN: 0x000001},
		DETH: decode.DETH{QKey: 0, SrcQP: 0}, Payload: smp}})
	r.Want.Ignore = decode.HdrMAD | decode.HdrCM
	g := &decode.GRH{IPVer: 6, TrafficClass: 0x20, FlowLabel: 0x54321, HopLimit: 255, SGID: gidA, DGID: gidB}
	p = c.psn
	b.add("LNH 3 (global): GRH + RC READ Request", IB{LRH: ibLRH(1, 4, 0xC002, 0x0001), GRH: g, T: c.req(rc(decode.OpReadRequest), 0, true, Transport{RETH: reth(0xE000, 0x2222, 13)}).T})
	c.msn++
	gr := *g
	gr.SGID, gr.DGID = gidB, gidA
	b.add("LNH 3: GRH + RC READ Response Only, 13 B, pad 3", IB{LRH: ibLRH(1, 4, 0x0001, 0xC002), GRH: &gr, T: c.resp(rc(decode.OpReadResponseOnly), p, 13, Transport{AETH: decode.AETH{Syndrome: 0x1F, MSN: c.msn}}).T})
	b.add("LNH 3: GRH + UD SEND Only with Immediate", IB{LRH: ibLRH(2, 2, 0xC002, 0x0001), GRH: g, T: Transport{
		BTH:  decode.BTH{Opcode: ud(decode.OpSendOnlyImm), PKey: 0x8001, DestQP: 0x00FEDC, PSN: 0x00ABCD, SE: true, PadCount: padFor(50)},
		DETH: decode.DETH{QKey: 0x0000BEEF, SrcQP: 0x000048}, ImmDt: decode.ImmDt{Data: 42}, Payload: payload(50, 6)}})
	return b.done()
}

// ibLIDRC: an RC exchange on native InfiniBand without a GRH between LID
// 1 (requester, QP 0x48) and LID 2 (responder, QP 0x49), where the LRH's
// LIDs are all that name the two nodes. The responder executes a WRITE, a
// READ of what it wrote and a FetchAdd on it, and NAKs a WRITE with an
// rkey it does not have: mpt learn, replay --responder lid:2 and the MPT
// check on LID-only traffic are tested on it.
func ibLIDRC() (File, error) {
	b := newFile("ib_lid_rc.pcap", PcapMicro, decode.LinkTypeInfiniBand)
	const va, rkey = 0x10000, 0x1111
	data := payload(64, 0x31)
	req := func(op uint8, psn uint32, t Transport) IB {
		t.BTH = decode.BTH{Opcode: rc(op), PKey: 0xFFFF, DestQP: 0x49, PSN: decode.PSN(psn), AckReq: true, PadCount: padFor(len(t.Payload))}
		return IB{LRH: ibLRH(0, 0, 0x0002, 0x0001), T: t}
	}
	resp := func(op uint8, psn uint32, syn uint8, msn uint32, t Transport) IB {
		t.BTH = decode.BTH{Opcode: rc(op), PKey: 0xFFFF, DestQP: 0x48, PSN: decode.PSN(psn), PadCount: padFor(len(t.Payload))}
		t.AETH = decode.AETH{Syndrome: syn, MSN: msn}
		return IB{LRH: ibLRH(0, 0, 0x0001, 0x0002), T: t}
	}
	b.add("LID 1 → LID 2: RC WRITE Only, 64 B at VA 0x10000 with rkey 0x1111", req(decode.OpWriteOnly, 100, Transport{RETH: reth(va, rkey, 64), Payload: data}))
	b.add("LID 2 → LID 1: ACK, MSN 1", resp(decode.OpAcknowledge, 100, 0x1F, 1, Transport{}))
	b.add("RC READ Request of the 64 bytes", req(decode.OpReadRequest, 101, Transport{RETH: reth(va, rkey, 64)}))
	b.add("RC READ Response Only: the bytes the WRITE stored, MSN 2", resp(decode.OpReadResponseOnly, 101, 0x1F, 2, Transport{Payload: data}))
	b.add("RC FetchAdd 1 at VA 0x10000", req(decode.OpFetchAdd, 102, Transport{AtomicETH: decode.AtomicETH{VA: va, RKey: rkey, SwapAddData: 1}}))
	b.add("ATOMIC ACK: the first 8 bytes written (little-endian) as the original value, MSN 3",
		resp(decode.OpAtomicAcknowledge, 102, 0x1F, 3, Transport{AtomicAckETH: decode.AtomicAckETH{OrigRemData: binary.LittleEndian.Uint64(data)}}))
	b.add("RC WRITE Only with rkey 0x1112, which the responder does not have", req(decode.OpWriteOnly, 103, Transport{RETH: reth(va, 0x1112, 64), Payload: data}))
	b.add("NAK Remote Access Error", resp(decode.OpAcknowledge, 103, 0x62, 3, Transport{}))
	return b.done()
}

// ibBadVCRC: native InfiniBand packets with a wrong VCRC and/or ICRC.
func ibBadVCRC() (File, error) {
	b := newFile("ib_bad_vcrc.pcap", PcapMicro, decode.LinkTypeInfiniBand)
	send := func(psn uint32) IB {
		return IB{LRH: ibLRH(0, 0, 0x0002, 0x0001), T: Transport{
			BTH: decode.BTH{Opcode: rc(decode.OpSendOnly), PKey: 0xFFFF, DestQP: 0x49, PSN: decode.PSN(psn)}, Payload: payload(16, byte(psn))}}
	}
	r := b.add("VCRC wrong, ICRC good", send(1))
	r.Data[len(r.Data)-1] ^= 0xFF
	r.Want.VCRC, r.Want.Flags = decode.CRCBad, r.Want.Flags|decode.FlagVCRCBad
	r = b.add("ICRC wrong, VCRC computed over the wrong ICRC (good)", send(2))
	icrc := len(r.Data) - decode.VCRCLen - decode.ICRCLen
	r.Data[icrc] ^= 0x01
	binary.LittleEndian.PutUint16(r.Data[len(r.Data)-2:], decode.ComputeVCRC(r.Data[:len(r.Data)-2]))
	r.Want.ICRC, r.Want.Flags = decode.CRCBad, r.Want.Flags|decode.FlagICRCBad
	r = b.add("ICRC and VCRC both wrong", send(3))
	r.Data[icrc] ^= 0x80
	r.Data[len(r.Data)-2] ^= 0x01
	r.Want.ICRC, r.Want.VCRC = decode.CRCBad, decode.CRCBad
	r.Want.Flags |= decode.FlagICRCBad | decode.FlagVCRCBad
	b.add("good packet for contrast", send(4))
	return b.done()
}

// erfIBEth: ERF records (link type 197) as ibdump writes them: InfiniBand
// records (type 21, LRH first) and Ethernet records (type 2).
func erfIBEth() (File, error) {
	b := newFile("erf_ib_eth.pcap", PcapMicro, decode.LinkTypeERF)
	erf := b.addERF
	c := &rcConn{qpA: 0x0000F1, qpB: 0x0000F2, pkey: 0xFFFF, psn: 0x00FFFF}
	ib := func(s RoCEv2) IB {
		if s.Reverse {
			return IB{LRH: ibLRH(0, 0, 0x0001, 0x0002), T: s.T}
		}
		return IB{LRH: ibLRH(0, 0, 0x0002, 0x0001), T: s.T}
	}
	p := c.psn
	erf("ERF type 21 (InfiniBand): RC SEND Only", decode.ERFTypeInfiniBand, ib(c.req(rc(decode.OpSendOnly), 60, true, Transport{})))
	erf("ERF type 21: RC ACK", decode.ERFTypeInfiniBand, ib(c.ack(p, 0x1F)))
	g := &decode.GRH{IPVer: 6, HopLimit: 64, SGID: gidA, DGID: gidB}
	erf("ERF type 21: LNH 3, GRH + RC WRITE Only", decode.ERFTypeInfiniBand, IB{LRH: ibLRH(0, 0, 0x0002, 0x0001), GRH: g,
		T: c.req(rc(decode.OpWriteOnly), 9, false, Transport{RETH: reth(0xF000, 0x3333, 9)}).T})
	c.v2 = RoCEv2{ECN: 2}
	p = c.psn
	erf("ERF type 2 (Ethernet, 2-byte pad, FCS): RoCEv2 READ Request", decode.ERFTypeEth, c.req(rc(decode.OpReadRequest), 0, true, Transport{RETH: reth(0xF100, 0x3333, 20)}))
	c.msn++
	erf("ERF type 2: RoCEv2 READ Response Only", decode.ERFTypeEth, c.resp(rc(decode.OpReadResponseOnly), p, 20, Transport{AETH: decode.AETH{Syndrome: 0x1F, MSN: c.msn}}))
	return b.done()
}

// sllSLL2Raw: a pcapng with three interfaces of different link types.
func sllSLL2Raw() (File, error) {
	b := newFile("sll_sll2_raw.pcapng", PcapNG, 0)
	b.f.Ifaces = []Iface{
		{Name: "any (Linux cooked v1)", LinkType: decode.LinkTypeLinuxSLL},
		{Name: "any (Linux cooked v2)", LinkType: decode.LinkTypeLinuxSLL2},
		{Name: "rxe0 (raw IP)", LinkType: decode.LinkTypeRaw},
	}
	c := &rcConn{qpA: 0x000061, qpB: 0x000062, pkey: 0xFFFF, psn: 0x000100}
	on := func(iface int, note string, s RoCEv2) {
		s.Link = []Link{LinkSLL, LinkSLL2, LinkRaw}[iface]
		r := b.add(note, s)
		r.Iface = iface
	}
	c.v2 = RoCEv2{ECN: 2}
	p := c.psn
	on(0, "SLL (outgoing): IPv4 SEND Only", c.req(rc(decode.OpSendOnly), 16, true, Transport{}))
	on(1, "SLL2: IPv4 ACK", c.ack(p, 0x1F))
	c.v2 = RoCEv2{IPv6: true, ECN: 2, UDPChecksum: true}
	p = c.psn
	on(2, "raw IP: IPv6 WRITE Only", c.req(rc(decode.OpWriteOnly), 12, true, Transport{RETH: reth(0x1234000, 0x55, 12)}))
	on(0, "SLL (to us): IPv6 ACK", c.ack(p, 0x1F))
	c.v2 = RoCEv2{ECN: 2}
	p = c.psn
	on(1, "SLL2: IPv4 READ Request", c.req(rc(decode.OpReadRequest), 0, true, Transport{RETH: reth(0x1235000, 0x55, 4)}))
	c.msn++
	on(2, "raw IP: IPv4 READ Response Only", c.resp(rc(decode.OpReadResponseOnly), p, 4, Transport{AETH: decode.AETH{Syndrome: 0x1F, MSN: c.msn}}))
	return b.done()
}

// nsTimestamps: a nanosecond pcap whose frames are nanoseconds apart.
func nsTimestamps() (File, error) {
	b := newFile("ns_timestamps.pcap", PcapNano, decode.LinkTypeEthernet)
	c := &rcConn{qpA: 0x000071, qpB: 0x000072, pkey: 0xFFFF, psn: 0x000200, v2: RoCEv2{ECN: 2}}
	b.add("WRITE First", c.req(rc(decode.OpWriteFirst), 256, false, Transport{RETH: reth(0x10000, 0x66, 700)}))
	b.add("WRITE Middle", c.req(rc(decode.OpWriteMiddle), 256, false, Transport{}))
	p := c.psn
	b.add("WRITE Last", c.req(rc(decode.OpWriteLast), 188, true, Transport{}))
	b.add("ACK", c.ack(p, 0x1F))
	p = c.psn
	b.add("SEND Only", c.req(rc(decode.OpSendOnly), 1, true, Transport{}))
	b.add("ACK", c.ack(p, 0x1F))
	// Offsets from a base time that is not a whole microsecond: frames 1 ns,
	// 997 ns and 2 ns apart, then across a second boundary.
	base := epoch.Add(123_456_789)
	offsets := []time.Duration{1, 2, 999, 1001, 1_000_001, 1_999_999_999}
	for i := range b.f.Records {
		r := &b.f.Records[i]
		r.Time = base.Add(offsets[i])
		r.Want.Note += " at +" + strconv.Itoa(int(offsets[i])) + " ns"
	}
	return b.done()
}

// cutExt is not compared on frames cut inside an extended header: Decode
// reports the captured bytes of the cut header as payload.
const cutExt = decode.HdrPayload

// truncatedFile: frames captured with snaplen 64, cut at different places.
func truncatedFile() (File, error) {
	const snap = 64
	b := newFile("truncated.pcap", PcapMicro, decode.LinkTypeEthernet)
	b.f.SnapLen = snap
	c := &rcConn{qpA: 0x000081, qpB: 0x000082, pkey: 0xFFFF, psn: 0xFFFFF0, v2: RoCEv2{ECN: 2}}
	// cut snaps the record at snap bytes; has is what remains decodable and
	// flags what Decode must say.
	cut := func(r *Record, has decode.Hdr, flags decode.Flag, icrc decode.CRCStatus) {
		if len(r.Data) > snap {
			r.Data = r.Data[:snap]
		}
		r.Want.Has, r.Want.Flags, r.Want.ICRC = has, flags, icrc
	}
	eth4 := decode.HdrEth | decode.HdrIPv4 | decode.HdrUDP
	unverifiable := decode.FlagICRCUnverifiable
	r := b.add("SEND Only, 200 B, cut inside the payload", c.req(rc(decode.OpSendOnly), 200, false, Transport{}))
	cut(r, eth4|decode.HdrBTH|decode.HdrPayload, decode.FlagTruncated|unverifiable, decode.CRCUnverifiable)
	// The captured bytes of a cut extended header are not payload; the
	// payload bit is not compared for those frames (see cutExt).
	r = b.add("WRITE Only, cut inside the RETH", c.req(rc(decode.OpWriteOnly), 100, false, Transport{RETH: reth(0x20000, 0x88, 100)}))
	cut(r, eth4|decode.HdrBTH, decode.FlagTruncated|unverifiable, decode.CRCUnverifiable)
	r.Want.Ignore = cutExt
	r = b.add("Compare Swap, cut inside the AtomicETH", c.req(rc(decode.OpCompareSwap), 0, false, Transport{AtomicETH: decode.AtomicETH{VA: 0x20008, RKey: 0x88, SwapAddData: 1}}))
	cut(r, eth4|decode.HdrBTH, decode.FlagTruncated|unverifiable, decode.CRCUnverifiable)
	r.Want.Ignore = cutExt
	r = b.add("802.1Q IPv4 UD SEND Only, cut inside the DETH", RoCEv2{VLANs: []VLAN{{TPID: 0x8100, ID: 29}}, T: Transport{
		BTH: decode.BTH{Opcode: ud(decode.OpSendOnly), PKey: 0xFFFF, DestQP: 0x000083, PSN: 0x000001}, DETH: decode.DETH{QKey: 0x1111, SrcQP: 0x84}, Payload: payload(30, 1)}})
	cut(r, eth4|decode.HdrVLAN|decode.HdrBTH, decode.FlagTruncated|unverifiable, decode.CRCUnverifiable)
	r.Want.Ignore = cutExt
	// Cut inside the BTH: the UDP port says RoCEv2, so the ICRC is
	// unverifiable.
	s := c.req(rc(decode.OpSendOnly), 40, false, Transport{})
	s.IPv6 = true
	r = b.add("IPv6 SEND Only, cut inside the BTH", s)
	cut(r, decode.HdrEth|decode.HdrIPv6|decode.HdrUDP, decode.FlagTruncated|unverifiable, decode.CRCUnverifiable)
	s = c.req(rc(decode.OpSendOnly), 40, false, Transport{})
	s.IPv6, s.VLANs = true, []VLAN{{TPID: 0x88A8, ID: 30}, {TPID: 0x8100, ID: 31}}
	r = b.add("QinQ IPv6 SEND Only, cut inside the UDP header (not known to be RoCE)", s)
	cut(r, decode.HdrEth|decode.HdrVLAN|decode.HdrIPv6, decode.FlagTruncated, decode.CRCAbsent)
	r.Want.Encap, r.Want.Opcode, r.Want.PSN, r.Want.DestQP, r.Want.AETH = decode.EncapNone, 0, 0, 0, -1
	r = b.add("SEND Only, 8 B (66 bytes), cut inside the ICRC", c.req(rc(decode.OpSendOnly), 8, false, Transport{}))
	cut(r, eth4|decode.HdrBTH|decode.HdrPayload, decode.FlagTruncated|unverifiable, decode.CRCUnverifiable)
	b.add("SEND Only, 0 B: 60 bytes, shorter than the snaplen, complete", c.req(rc(decode.OpSendOnly), 0, false, Transport{}))
	return b.done()
}

// badICRC: frames whose ICRC is wrong, and one whose variant fields changed
// in flight (ICRC still good).
func badICRC() (File, error) {
	b := newFile("bad_icrc.pcap", PcapMicro, decode.LinkTypeEthernet)
	c := &rcConn{qpA: 0x000091, qpB: 0x000092, pkey: 0xFFFF, psn: 0x000300, v2: RoCEv2{ECN: 2}}
	bad := func(r *Record) {
		r.Want.ICRC = decode.CRCBad
		r.Want.Flags |= decode.FlagICRCBad
	}
	icrcAt := func(r *Record) []byte {
		var p decode.Packet
		p.Frame.Len = len(r.Data)
		decode.Decode(&p, r.Data, decode.LinkTypeEthernet)
		off := p.Offset(p.ICRC.Contents)
		if off < 0 {
			return make([]byte, 4)
		}
		return r.Data[off : off+4]
	}
	r := b.add("IPv4 SEND Only, one ICRC bit flipped", c.req(rc(decode.OpSendOnly), 32, false, Transport{}))
	icrcAt(r)[2] ^= 0x10
	bad(r)
	s := c.req(rc(decode.OpWriteOnly), 16, false, Transport{RETH: reth(0x30000, 0x99, 16)})
	s.IPv6, s.UDPChecksum = true, true
	r = b.add("IPv6 WRITE Only, ICRC zero", s)
	clear(icrcAt(r))
	bad(r)
	r = b.add("ACK, ICRC stored big-endian (byte-swapped)", c.ack(c.psn-1, 0x1F))
	ic := icrcAt(r)
	ic[0], ic[1], ic[2], ic[3] = ic[3], ic[2], ic[1], ic[0]
	bad(r)
	r = b.add("SEND Only, P_Key changed after the ICRC was computed", c.req(rc(decode.OpSendOnly), 8, false, Transport{}))
	r.Data[14+20+8+3] ^= 0x01 // P_Key low byte
	bad(r)
	r = b.add("RoCEv1 SEND Only, ICRC wrong", RoCEv1{HopLimit: 1, T: c.req(rc(decode.OpSendOnly), 12, false, Transport{}).T})
	icrcAt(r)[0] ^= 0xFF
	bad(r)
	r = b.add("SEND Only, variant fields changed in flight (TTL, ECN CE, FECN): ICRC still good", c.req(rc(decode.OpSendOnly), 8, false, Transport{}))
	ip := r.Data[14 : 14+20]
	ip[1] |= 3 // ECN CE
	ip[8] -= 3 // TTL
	binary.BigEndian.PutUint16(ip[10:], ipv4Checksum(ip))
	r.Data[14+20+8+4] |= 0x80 // FECN
	r.Want.ECN = 3
	return b.done()
}

// ipv4Checksum returns the header checksum of the IPv4 header h.
func ipv4Checksum(h []byte) uint16 {
	var sum uint32
	for i := 0; i+1 < len(h); i += 2 {
		if i != 10 {
			sum += uint32(binary.BigEndian.Uint16(h[i:]))
		}
	}
	for sum > 0xFFFF {
		sum = sum&0xFFFF + sum>>16
	}
	return ^uint16(sum)
}
