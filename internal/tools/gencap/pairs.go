package main

import (
	"encoding/binary"
	"net"
)

// The QP-scaling capture (-pairs): many RC QP pairs, few packets each, to
// measure how rocetap's per-session state grows with the number of QPs.
//
// Pair p (0 ≤ p < P) runs between the two hosts of host pair p mod 64
// (10.2.h.1 requester, 10.2.h.2 responder), so thousands of QP pairs
// share each pair of addresses as on a real cluster. Its requester QP is
// 0x1000+2p, its responder QP 0x1001+2p; its first PSN, R_Key, VA and UDP
// source ports (one per direction) are its own. One exchange is four packets:
//
//	requester → responder  RDMA WRITE Only (RETH, 1 KiB), PSN n, AckReq
//	responder → requester  Acknowledge (AETH), PSN n
//	requester → responder  RDMA READ Request (RETH, 1 KiB), PSN n+1
//	responder → requester  RDMA READ Response Only (AETH, 1 KiB), PSN n+1
//
// The capture is made of rounds; in each round every pair makes one
// exchange, the pairs in one fixed shuffled order (so neighbours in the
// file are not neighbours in QP number or in the order sessions were
// created). -n packets in all (4×P by default: one exchange per pair); the
// last exchange is cut short when -n is not a multiple of 4.

const (
	maxScalePairs = 8 << 20 // QPNs 0x1000+2p and 0x1001+2p stay within 24 bits
	scaleHosts    = 64      // host pairs
	scaleQPN      = 0x1000
)

var scaleKinds = [4]int{kWriteOnly, kAck, kReadRequest, kReadRespOnly}

// scalePair is the state of one pair: 8 bytes, so a million pairs take
// 8 MB (the frames come from the templates of its host pair).
type scalePair struct {
	psn uint32 // requester's next PSN
	msn uint32 // responder's message sequence number
}

func runPairs(path string, n, npairs int, seed uint64) error {
	r := rng(seed)
	hosts := min(npairs, scaleHosts)
	tmpl := make([][4]template, hosts)
	for h := range tmpl {
		q := &qpPair{
			req:  side{mac: net.HardwareAddr{0x02, 0x00, 0x0a, 0x02, byte(h), 0x01}, ip: net.IPv4(10, 2, byte(h), 1), qpn: scaleQPN},
			resp: side{mac: net.HardwareAddr{0x02, 0x00, 0x0a, 0x02, byte(h), 0x02}, ip: net.IPv4(10, 2, byte(h), 2), qpn: scaleQPN + 1},
			rkey: 1,
		}
		for i, k := range scaleKinds {
			t, err := q.buildTemplate(k, h)
			if err != nil {
				return err
			}
			tmpl[h][i] = t
		}
	}
	pairs := make([]scalePair, npairs)
	for p := range pairs {
		pairs[p].psn = uint32(r.next()) & psnMask
	}
	order := make([]uint32, npairs)
	for i := range order {
		order[i] = uint32(i)
	}
	for i := len(order) - 1; i > 0; i-- {
		j := r.intn(i + 1)
		order[i], order[j] = order[j], order[i]
	}

	w, err := create(path)
	if err != nil {
		return err
	}
	defer w.abort()
	usec := uint64(0)
	for k := 0; k < n; {
		for _, p := range order {
			if k >= n {
				break
			}
			q := &pairs[p]
			ts := tmpl[int(p)%hosts][:]
			reqQPN := scaleQPN + 2*p
			sport := [2]uint16{uint16(49152 + (int(p)*7919)%16384), uint16(49152 + (int(p)*104729)%16384)}
			rkey := 0x10000 + p
			va := 0x7f0000000000 + uint64(p)<<20
			for i := range scaleKinds {
				if k >= n {
					break
				}
				t := &ts[i]
				fr := t.rec[recHdr:]
				psn, dqp := q.psn, reqQPN+1
				switch i {
				case 1: // ACK of the WRITE
					q.msn = (q.msn + 1) & psnMask
					dqp = reqQPN
				case 2: // READ request
					psn = (q.psn + 1) & psnMask
				case 3: // READ response
					q.msn = (q.msn + 1) & psnMask
					psn, dqp = (q.psn+1)&psnMask, reqQPN
					q.psn = (q.psn + 2) & psnMask
				}
				binary.BigEndian.PutUint16(fr[ipOff+ipLen:], sport[i&1]) // requests even, responses odd
				b := fr[bthOff:]
				b[5], b[6], b[7] = byte(dqp>>16), byte(dqp>>8), byte(dqp)
				b[9], b[10], b[11] = byte(psn>>16), byte(psn>>8), byte(psn)
				if t.reth {
					binary.BigEndian.PutUint64(fr[extOff:], va)
					binary.BigEndian.PutUint32(fr[extOff+8:], rkey)
					binary.BigEndian.PutUint32(fr[extOff+12:], mtu)
				}
				if t.aeth {
					a := fr[extOff+1:]
					a[0], a[1], a[2] = byte(q.msn>>16), byte(q.msn>>8), byte(q.msn)
				}
				usec += 1 + uint64(r.intn(2))
				binary.LittleEndian.PutUint32(t.rec[0:], uint32(baseUnix+usec/1e6))
				binary.LittleEndian.PutUint32(t.rec[4:], uint32(usec%1e6))
				finish(t)
				if _, err := w.Write(t.rec); err != nil {
					return err
				}
				k++
			}
		}
	}
	return w.commit()
}
