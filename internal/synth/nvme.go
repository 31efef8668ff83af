package synth

import (
	"encoding/binary"

	"github.com/rocetap/rocetap/decode"
)

// NVMe-oF/RDMA scenarios for what the kernel's captures (testdata/ulp)
// lack: each raises one NVMe expert finding, or starts mid-stream. There is
// no CM exchange in them: they are decoded with
// -d infiniband.bth.destqp==0x13,nvme-rdma (the target's QP 0x13, which
// the capsules go to; the host's is 0x12). Every request is acknowledged, so the transport analysis
// finds nothing.

// NVMeFiles returns the NVMe-oF scenarios, in a fixed order; they live in
// testdata/ulp/synth.
func NVMeFiles() ([]File, error) {
	var out []File
	for _, fn := range []func() (File, error){nvmeError, nvmeNoCompletion, nvmeLength, nvmeOutside, nvmeKeyAfterInvalidate, nvmeMidStream} {
		f, err := fn()
		if err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	return out, nil
}

// nvmeConn is an RC connection between an NVMe host (side A, QP 0x12)
// and target (side B, QP 0x13); each side numbers its own requests.
type nvmeConn struct {
	b          *fileBuilder
	psn        [2]uint32 // next request PSN of host, target
	msn        [2]uint32
	hostQP, tQ uint32
}

func newNVMeConn(name string) *nvmeConn {
	return &nvmeConn{b: newFile(name, PcapMicro, decode.LinkTypeEthernet), psn: [2]uint32{0x1000, 0x8000}, hostQP: 0x12, tQ: 0x13}
}

// send adds a request from side (0 host, 1 target) and its ACK.
func (c *nvmeConn) send(note string, side int, op decode.Opcode, t Transport) {
	dst, back := c.tQ, c.hostQP
	if side == 1 {
		dst, back = c.hostQP, c.tQ
	}
	psn := c.psn[side]
	c.psn[side] = (psn + 1) & 0xFFFFFF
	t.BTH = decode.BTH{Opcode: op, PKey: 0xFFFF, DestQP: dst, PSN: decode.PSN(psn), PadCount: padFor(len(t.Payload)), AckReq: true}
	c.b.add(note, RoCEv2{Reverse: side == 1, T: t})
	c.msn[side]++
	ack := Transport{BTH: decode.BTH{Opcode: rc(decode.OpAcknowledge), PKey: 0xFFFF, DestQP: back, PSN: decode.PSN(psn)},
		AETH: decode.AETH{Syndrome: 0x1F, MSN: c.msn[side] & 0xFFFFFF}}
	c.b.add("ACK", RoCEv2{Reverse: side == 0, T: ack})
}

// NVMeSQE returns a 64-byte NVMe command (for the captures here, and
// for tests that feed a linker capsules directly): opcode, cid, nsid, a keyed SGL
// (key, address, length; key 0: an offset SGL of length ln into the
// capsule), SLBA and 0-based NLB.
func NVMeSQE(opc uint8, cid uint16, nsid uint32, key uint32, addr uint64, ln uint32, slba uint64, nlb uint16) []byte {
	b := make([]byte, 64)
	b[0], b[1] = opc, 0x40
	le := binary.LittleEndian
	le.PutUint16(b[2:], cid)
	le.PutUint32(b[4:], nsid)
	le.PutUint64(b[24:], addr)
	if key != 0 {
		b[32], b[33], b[34] = byte(ln), byte(ln>>8), byte(ln>>16)
		le.PutUint32(b[35:], key)
		b[39] = 0x4A // keyed data block, invalidate key
	} else {
		le.PutUint32(b[32:], ln)
		b[39] = 0x01 // data block, offset
	}
	le.PutUint64(b[40:], slba)
	le.PutUint16(b[48:], nlb)
	return b
}

// cqe returns a 16-byte completion: cid, SQ head, SQ id, status (SCT<<8 |
// SC, without the phase tag).
func cqe(cid, sqhd, sqid, status uint16) []byte {
	b := make([]byte, 16)
	le := binary.LittleEndian
	le.PutUint16(b[8:], sqhd)
	le.PutUint16(b[10:], sqid)
	le.PutUint16(b[12:], cid)
	le.PutUint16(b[14:], status<<1)
	return b
}

func (c *nvmeConn) command(note string, capsule []byte) {
	c.send(note, 0, rc(decode.OpSendOnly), Transport{Payload: capsule})
}

func (c *nvmeConn) completion(note string, b []byte, invKey uint32) {
	if invKey != 0 {
		c.send(note, 1, rc(decode.OpSendOnlyInv), Transport{IETH: decode.IETH{RKey: invKey}, Payload: b})
		return
	}
	c.send(note, 1, rc(decode.OpSendOnly), Transport{Payload: b})
}

// write adds the target's RDMA WRITE Only of n bytes at addr with key.
func (c *nvmeConn) write(note string, key uint32, addr uint64, n int) {
	c.send(note, 1, rc(decode.OpWriteOnly), Transport{RETH: reth(addr, key, uint32(n)), Payload: payload(n, byte(addr))})
}

const nvmeHostBuf = 0xffff8a5700001000

// nvmeError: a Read of one block fails with Unrecovered Read Error (SCT 2,
// SC 0x81): ulp_error_status.
func nvmeError() (File, error) {
	c := newNVMeConn("nvme_error_status.pcap")
	c.command("NVMe Read cid 1, 1 block at LBA 100", NVMeSQE(0x02, 1, 1, 0x1001, nvmeHostBuf, 512, 100, 0))
	c.completion("CQE cid 1: Unrecovered Read Error", cqe(1, 1, 1, 0x281), 0)
	return c.b.done()
}

// nvmeNoCompletion: a Write with its data in the capsule is never
// completed, though a later Flush is (2 ms later): ulp_no_completion.
func nvmeNoCompletion() (File, error) {
	c := newNVMeConn("nvme_no_completion.pcap")
	c.command("NVMe Write cid 2, 1 block in the capsule", append(NVMeSQE(0x01, 2, 1, 0, 0, 512, 8, 0), payload(512, 2)...))
	c.b.step = 2_000_000 // 2 ms
	c.command("NVMe Flush cid 3", NVMeSQE(0x00, 3, 1, 0, 0, 0, 0, 0))
	c.completion("CQE cid 3: success", cqe(3, 2, 1, 0), 0)
	return c.b.done()
}

// nvmeLength: a Read of 2 blocks (1024 bytes) completes successfully
// after the target wrote only 512 bytes with its key:
// ulp_length_mismatch.
func nvmeLength() (File, error) {
	c := newNVMeConn("nvme_length_mismatch.pcap")
	c.command("NVMe Read cid 4, 2 blocks", NVMeSQE(0x02, 4, 1, 0x1004, nvmeHostBuf, 1024, 0, 1))
	c.write("RDMA WRITE of 512 bytes: half the data", 0x1004, nvmeHostBuf, 512)
	c.completion("CQE cid 4: success, key invalidated", cqe(4, 1, 1, 0), 0x1004)
	return c.b.done()
}

// nvmeOutside: a Read of one block whose data the target writes 256
// bytes past the SGL's address: ulp_outside_buffer.
func nvmeOutside() (File, error) {
	c := newNVMeConn("nvme_outside_sgl.pcap")
	c.command("NVMe Read cid 5, 1 block", NVMeSQE(0x02, 5, 1, 0x1005, nvmeHostBuf, 512, 0, 0))
	c.write("RDMA WRITE of 512 bytes at the SGL + 256: 256 bytes beyond it", 0x1005, nvmeHostBuf+256, 512)
	c.completion("CQE cid 5: success, key invalidated", cqe(5, 1, 1, 0), 0x1005)
	return c.b.done()
}

// nvmeKeyAfterInvalidate: a Read completes with SEND with Invalidate of
// its key, then the target writes with that key again:
// ulp_key_invalidated.
func nvmeKeyAfterInvalidate() (File, error) {
	c := newNVMeConn("nvme_key_after_invalidate.pcap")
	c.command("NVMe Read cid 6, 1 block", NVMeSQE(0x02, 6, 1, 0x1006, nvmeHostBuf, 512, 0, 0))
	c.write("RDMA WRITE of the block", 0x1006, nvmeHostBuf, 512)
	c.completion("CQE cid 6: success, SEND with Invalidate of key 0x1006", cqe(6, 1, 1, 0), 0x1006)
	c.write("RDMA WRITE with the invalidated key 0x1006", 0x1006, nvmeHostBuf, 512)
	return c.b.done()
}

// nvmeMidStream: the capture starts while a Read (cid 7, key 0x1007) is in
// flight: its data and completion come first (ulp_no_command for the
// completion, the data has no command to belong to), then a whole Read
// (cid 8) is decoded and linked.
func nvmeMidStream() (File, error) {
	c := newNVMeConn("nvme_midstream.pcap")
	c.psn = [2]uint32{0x2000, 0x9000}
	c.write("RDMA WRITE for cid 7, sent before the capture", 0x1007, nvmeHostBuf, 512)
	c.completion("CQE cid 7: its command is not in the capture", cqe(7, 3, 1, 0), 0x1007)
	c.command("NVMe Read cid 8, 1 block at LBA 2048", NVMeSQE(0x02, 8, 1, 0x1008, nvmeHostBuf+4096, 512, 2048, 0))
	c.write("RDMA WRITE of the block", 0x1008, nvmeHostBuf+4096, 512)
	c.completion("CQE cid 8: success, key invalidated", cqe(8, 4, 1, 0), 0x1008)
	return c.b.done()
}
