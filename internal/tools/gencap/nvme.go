package main

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"net"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/rocetap/rocetap/decode"
)

// The NVMe-oF capture (-nvme Q): Q I/O queues of an NVMe-oF/RDMA host and
// target, for the cost of rocetap's NVMe decode and linking. Queue q runs
// between host 10.3.q.1 (QP 0x12) and target 10.3.q.2 (QP 0x13), without
// a CM exchange, so rocetap finds the protocol with
//
//	-d infiniband.bth.destqp==0x13,nvme-rdma
//
// Each queue runs 4 KiB commands one after the other, Reads and Writes at
// random (MTU 1024):
//
//	Read   host SEND Only (64-byte capsule, keyed SGL)   ACK
//	       target RDMA WRITE First/Middle/Middle/Last     ACK
//	       target SEND Only with Invalidate (16-byte CQE) ACK
//	Write  host SEND Only (capsule)                       ACK
//	       target RDMA READ Request, host READ Response First/Middle/Middle/Last
//	       target SEND Only with Invalidate (CQE)         ACK
//
// 9 packets a command; the queues' packets interleave. Each command has its
// own cid, key and buffer address; every ICRC is correct.

const nvmeBlock = 512

type nvmeQueue struct {
	host, tgt side
	psn       [2]uint32 // next request PSN: host, target
	msn       [2]uint32
	cid       uint16
	key       uint32
	va        uint64
	slba      uint64
	write     bool
	step      int
}

func runNVMe(path string, n, queues int, seed uint64) error {
	w, err := create(path)
	if err != nil {
		return err
	}
	defer w.abort()
	qs := make([]*nvmeQueue, queues)
	for i := range qs {
		qs[i] = &nvmeQueue{
			host: side{mac: net.HardwareAddr{0x02, 0, 0x0a, 0x03, byte(i), 1}, ip: net.IPv4(10, 3, byte(i), 1), qpn: 0x12, port: 0xC000 + uint16(i)},
			tgt:  side{mac: net.HardwareAddr{0x02, 0, 0x0a, 0x03, byte(i), 2}, ip: net.IPv4(10, 3, byte(i), 2), qpn: 0x13, port: 0xD000 + uint16(i)},
			psn:  [2]uint32{0x100000 * uint32(i+1), 0x800000 + 0x1000*uint32(i)},
			key:  0x10000 * uint32(i+1),
		}
	}
	r := rng(seed)
	pl := make([]byte, mtu)
	for i := 0; i < len(pl); i += 8 {
		binary.LittleEndian.PutUint64(pl[i:], r.next())
	}
	usec := uint64(0)
	for k := 0; k < n; k++ {
		q := qs[r.intn(len(qs))]
		usec += 1 + uint64(r.intn(2))
		frame, err := q.next(&r, pl)
		if err != nil {
			return err
		}
		if err := writeRecord(w.Writer, frame, usec); err != nil {
			return err
		}
	}
	return w.commit()
}

func writeRecord(w *bufio.Writer, frame []byte, usec uint64) error {
	var h [recHdr]byte
	binary.LittleEndian.PutUint32(h[0:], uint32(baseUnix+usec/1e6))
	binary.LittleEndian.PutUint32(h[4:], uint32(usec%1e6))
	binary.LittleEndian.PutUint32(h[8:], uint32(len(frame)))
	binary.LittleEndian.PutUint32(h[12:], uint32(len(frame)))
	if _, err := w.Write(h[:]); err != nil {
		return err
	}
	_, err := w.Write(frame)
	return err
}

// next returns the queue's next packet.
func (q *nvmeQueue) next(r *rng, pl []byte) ([]byte, error) {
	s := q.step
	q.step = (q.step + 1) % 9
	if s == 0 {
		q.write = r.intn(2) == 0
		q.cid = (q.cid + 1) & 0x3FF
		q.key = q.key&^0xFFFF | (q.key+1)&0xFFFF
		q.va = 0xffff8a5700000000 + uint64(q.cid)<<12
		q.slba = uint64(r.intn(1 << 20))
	}
	const host, tgt = 0, 1
	rc := func(op uint8) decode.Opcode { return decode.TransportRC.Opcode(op) }
	switch {
	case s == 0: // the command capsule
		opc := uint8(0x02)
		if q.write {
			opc = 0x01
		}
		return q.req(host, rc(decode.OpSendOnly), nil, nvmeSQE(opc, q.cid, q.key, q.va, q.slba))
	case s == 1, s == 6 && !q.write, s == 8:
		from := tgt // ACK of the capsule (s 1) or of the CQE (s 8)
		if s == 6 || s == 8 {
			from = host // ACK of the last WRITE (s 6), of the CQE (s 8)
		}
		return q.ack(from)
	case s >= 2 && s <= 5 && !q.write: // the data, by RDMA WRITE
		ops := [4]uint8{decode.OpWriteFirst, decode.OpWriteMiddle, decode.OpWriteMiddle, decode.OpWriteLast}
		var ext gopacket.SerializableLayer
		if s == 2 {
			ext = &decode.RETH{VA: q.va, RKey: q.key, DMALen: 4 * mtu}
		}
		return q.req(tgt, rc(ops[s-2]), ext, pl)
	case s == 2: // the data, by RDMA READ
		return q.req(tgt, rc(decode.OpReadRequest), &decode.RETH{VA: q.va, RKey: q.key, DMALen: 4 * mtu}, nil)
	case s >= 3 && s <= 6: // READ responses, PSNs of the request on
		ops := [4]uint8{decode.OpReadResponseFirst, decode.OpReadResponseMiddle, decode.OpReadResponseMiddle, decode.OpReadResponseLast}
		psn := (q.psn[tgt] - 1 + uint32(s-3)) & psnMask
		if s == 6 {
			q.psn[tgt] = (q.psn[tgt] + 3) & psnMask // a READ takes as many PSNs as responses
		}
		var ext gopacket.SerializableLayer
		if s == 3 || s == 6 {
			ext = &decode.AETH{Syndrome: 0x1F, MSN: q.msn[host]}
		}
		return q.frame(host, rc(ops[s-3]), psn, false, ext, pl)
	default: // s == 7: the completion, with Invalidate of the key
		cqe := make([]byte, 16)
		binary.LittleEndian.PutUint16(cqe[8:], q.cid)
		binary.LittleEndian.PutUint16(cqe[10:], 1)
		binary.LittleEndian.PutUint16(cqe[12:], q.cid)
		return q.req(tgt, rc(decode.OpSendOnlyInv), &decode.IETH{RKey: q.key}, cqe)
	}
}

// nvmeSQE is a Read or Write capsule of 8 blocks (4 KiB) with a keyed SGL.
func nvmeSQE(opc uint8, cid uint16, key uint32, va, slba uint64) []byte {
	b := make([]byte, 64)
	le := binary.LittleEndian
	b[0], b[1] = opc, 0x40
	le.PutUint16(b[2:], cid)
	le.PutUint32(b[4:], 1)
	le.PutUint64(b[24:], va)
	b[32], b[33], b[34] = 0, 0x10, 0 // 4096
	le.PutUint32(b[35:], key)
	b[39] = 0x4A
	le.PutUint64(b[40:], slba)
	le.PutUint16(b[48:], 4*mtu/nvmeBlock-1)
	return b
}

// req is a request from side from (0 host, 1 target) with the next PSN.
func (q *nvmeQueue) req(from int, op decode.Opcode, ext gopacket.SerializableLayer, payload []byte) ([]byte, error) {
	psn := q.psn[from]
	q.psn[from] = (psn + 1) & psnMask
	ack := op.Is(decode.PropEnd) || op.Is(decode.PropRead)
	if ack {
		q.msn[1-from] = (q.msn[1-from] + 1) & psnMask
	}
	return q.frame(from, op, psn, ack, ext, payload)
}

// ack acknowledges, from side from, the other side's last request.
func (q *nvmeQueue) ack(from int) ([]byte, error) {
	psn := (q.psn[1-from] - 1) & psnMask
	return q.frame(from, decode.TransportRC.Opcode(decode.OpAcknowledge), psn, false, &decode.AETH{Syndrome: 0x1F, MSN: q.msn[from]}, nil)
}

func (q *nvmeQueue) frame(from int, op decode.Opcode, psn uint32, ackReq bool, ext gopacket.SerializableLayer, payload []byte) ([]byte, error) {
	src, dst := &q.host, &q.tgt
	if from == 1 {
		src, dst = dst, src
	}
	eth := &layers.Ethernet{SrcMAC: src.mac, DstMAC: dst.mac, EthernetType: layers.EthernetTypeIPv4}
	src.ipID++
	ip := &layers.IPv4{Version: 4, IHL: 5, TTL: 64, Id: src.ipID, Flags: layers.IPv4DontFragment, Protocol: layers.IPProtocolUDP, SrcIP: src.ip.To4(), DstIP: dst.ip.To4()}
	udp := &layers.UDP{SrcPort: layers.UDPPort(src.port), DstPort: layers.UDPPort(decode.RoCEv2Port)}
	bth := &decode.BTH{Opcode: op, PKey: 0xFFFF, DestQP: dst.qpn, PSN: decode.PSN(psn), AckReq: ackReq, PadCount: uint8(-len(payload) & 3)}
	ls := []gopacket.SerializableLayer{eth, ip, udp, bth}
	if ext != nil {
		ls = append(ls, ext)
	}
	if len(payload) > 0 {
		ls = append(ls, gopacket.Payload(append(payload, make([]byte, bth.PadCount)...)))
	}
	ls = append(ls, &decode.ICRC{})
	buf := gopacket.NewSerializeBuffer()
	if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{FixLengths: true}, ls...); err != nil {
		return nil, fmt.Errorf("nvme frame: %w", err)
	}
	frame := buf.Bytes()
	binary.BigEndian.PutUint16(frame[ipOff+10:], ipChecksum(frame[ipOff:ipOff+ipLen]))
	if err := decode.FixCRCs(frame, decode.LinkTypeEthernet); err != nil {
		return nil, err
	}
	return frame, nil
}
