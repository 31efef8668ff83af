// Command gencap writes a synthetic RoCEv2 capture for benchmarks: a classic
// pcap (Ethernet, microsecond timestamps) of N RoCEv2/IPv4 frames exchanged
// by several RC queue-pair pairs.
//
//	go run ./internal/tools/gencap -n 1000000 -o bench/out/bench.pcap
//
// Each QP pair runs a stream of messages: RDMA WRITE (First/Middle/Last or
// Only, then an ACK), RDMA READ (a request, then READ Response
// First/Middle/Last or Only) and SEND (First/Middle/Last or Only, then an
// ACK). Every data packet carries 1 KiB of payload (path MTU 1024). Request
// PSNs are consecutive per QP and wrap at 2^24; responses and ACKs carry the
// PSN of the request they answer. Packets of different QP pairs interleave.
//
// With -mpt FILE, every QP pair runs between the same two hosts (requester
// 10.1.0.1, responder 10.1.0.2), RDMA WRITE and READ RESPONSE payloads
// come from one memory image per pair (so a READ returns what earlier
// WRITEs stored at its address), and FILE gets the MPT file of the
// responder (docs/mpt-format.md): `rocetap replay -r OUT --mpt FILE`
// replays the capture without a divergence. The messages in progress after
// N packets are finished, so the file has a few more packets than N.
//
//	go run ./internal/tools/gencap -n 1000000 -o replay.pcap -mpt replay.mpt.json
//
// With -pairs P, the capture is the QP-scaling one instead (pairs.go): P
// RC QP pairs, each with its own QPNs and first PSN, each running a
// 4-packet exchange (RDMA WRITE Only + ACK, RDMA READ Request + READ
// Response Only), 4×P packets unless -n says otherwise.
//
//	go run ./internal/tools/gencap -pairs 1000000 -o qp1m.pcap
//
// With -nvme Q, the capture is NVMe-oF/RDMA traffic of Q I/O queues
// instead (nvme.go), for the cost of the NVMe decode and linking.
//
//	go run ./internal/tools/gencap -nvme 8 -n 1000000 -o nvme1m.pcap
//
// With -mrs M, it writes no capture but an MPT file of M memory regions
// (mpt.Synthetic), for the cost of loading one (bench/run.sh, section 9).
//
//	go run ./internal/tools/gencap -mrs 1000000 -o mrs1m.mpt.json
//
// Frames are built once per (QP pair, packet kind) with gopacket and the
// decode layers; each packet then patches a template in place (timestamp,
// IPv4 ID and checksum, PSN, RETH, AETH MSN, ICRC) and writes it, so a
// million packets take about a second. The output depends only on the
// flags.
//
// An existing -o or -mpt file is never replaced unless -force says so:
// gencap stops with an error naming it. A file appears only once it is
// complete (internal/outfile): a failure leaves nothing of it behind.
package main

import (
	"bufio"
	"encoding/binary"
	"flag"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/rocetap/rocetap/decode"
	"github.com/rocetap/rocetap/hca"
	"github.com/rocetap/rocetap/internal/outfile"
	"github.com/rocetap/rocetap/mpt"
)

// Packet kinds, one template each per QP pair.
const (
	kWriteFirst = iota
	kWriteMiddle
	kWriteLast
	kWriteOnly
	kReadRequest
	kReadRespFirst
	kReadRespMiddle
	kReadRespLast
	kReadRespOnly
	kSendFirst
	kSendMiddle
	kSendLast
	kSendOnly
	kAck
	numKinds
)

var kindOpcode = [numKinds]decode.Opcode{
	kWriteFirst:     decode.OpWriteFirst,
	kWriteMiddle:    decode.OpWriteMiddle,
	kWriteLast:      decode.OpWriteLast,
	kWriteOnly:      decode.OpWriteOnly,
	kReadRequest:    decode.OpReadRequest,
	kReadRespFirst:  decode.OpReadResponseFirst,
	kReadRespMiddle: decode.OpReadResponseMiddle,
	kReadRespLast:   decode.OpReadResponseLast,
	kReadRespOnly:   decode.OpReadResponseOnly,
	kSendFirst:      decode.OpSendFirst,
	kSendMiddle:     decode.OpSendMiddle,
	kSendLast:       decode.OpSendLast,
	kSendOnly:       decode.OpSendOnly,
	kAck:            decode.OpAcknowledge,
}

const (
	mtu      = 1024
	psnMask  = 1<<24 - 1
	recHdr   = 16 // pcap record header
	ethLen   = 14
	ipOff    = ethLen
	ipLen    = 20
	bthOff   = ipOff + ipLen + 8
	extOff   = bthOff + decode.BTHLen
	maxPkts  = 8          // largest message, in packets
	baseUnix = 1767225600 // 2026-01-01 00:00:00 UTC
)

// template is one pcap record (16-byte header, then the frame) and where
// its per-packet fields are.
type template struct {
	rec    []byte
	reth   bool // RETH at extOff
	aeth   bool // AETH at extOff
	ipID   *uint16
	payOff int // payload offset in the frame (0: none)
}

// side is one end of a QP pair.
type side struct {
	mac  net.HardwareAddr
	ip   net.IP
	qpn  uint32
	port uint16
	ipID uint16
}

type qpPair struct {
	req, resp side
	tmpl      [numKinds]template
	rkey      uint32
	vaBase    uint64
	vaOff     uint64
	psn       uint32 // requester's next PSN
	msn       uint32 // responder's message sequence number
	// current message
	op     int // kWriteFirst, kReadRequest or kSendFirst
	n      int // packets in the message
	i      int // next packet: 0..n-1 data, n = ACK (WRITE, SEND); READ: 0 request, 1..n responses
	psn0   uint32
	va     uint64
	active bool
	// -mpt: the memory image the WRITEs and READs of the pair use, and
	// the offset in it of the next packet's payload (-1: none).
	image   []byte
	dataOff int
}

// rng is splitmix64: deterministic across Go versions.
type rng uint64

func (r *rng) next() uint64 {
	*r += 0x9E3779B97F4A7C15
	z := uint64(*r)
	z = (z ^ z>>30) * 0xBF58476D1CE4E5B9
	z = (z ^ z>>27) * 0x94D049BB133111EB
	return z ^ z>>31
}

func (r *rng) intn(n int) int { return int(r.next() % uint64(n)) }

func main() {
	n := flag.Int("n", 1000000, "number of packets")
	out := flag.String("o", "", "output pcap file (- for stdout)")
	pairs := flag.Int("qps", 8, "number of RC QP pairs")
	seed := flag.Uint64("seed", 1, "random seed (same seed, same file)")
	mpt := flag.String("mpt", "", "one responder for every pair, READ data consistent with WRITEs, and its MPT file written here (for rocetap replay)")
	scale := flag.Int("pairs", 0, "QP-scaling capture instead: this many RC QP pairs, each its own QPNs and PSNs, each doing WRITE Only + ACK and READ + READ Response Only (4 packets; -n defaults to 4×pairs)")
	mrs := flag.Int("mrs", 0, "an MPT file of this many MRs instead of a capture (mpt.Synthetic), written to -o")
	nvmeQueues := flag.Int("nvme", 0, "NVMe-oF capture instead: this many I/O queues running 4 KiB Reads and Writes (nvme.go; decode with -d infiniband.bth.destqp==0x13,nvme-rdma)")
	flag.BoolVar(&replace, "force", false, "replace the -o and -mpt files if they exist (else gencap refuses to)")
	flag.Parse()
	set := map[string]bool{}
	flag.Visit(func(f *flag.Flag) { set[f.Name] = true })
	delete(set, "force") // (it goes with any form)
	usage := func() {
		fmt.Fprintln(os.Stderr, "usage: gencap -n PACKETS -o FILE [-qps PAIRS] [-seed S] [-mpt MPTFILE] [-force]")
		fmt.Fprintln(os.Stderr, "       gencap -pairs PAIRS -o FILE [-n PACKETS] [-seed S] [-force]")
		fmt.Fprintln(os.Stderr, "       gencap -nvme QUEUES -o FILE [-n PACKETS] [-seed S] [-force]")
		fmt.Fprintln(os.Stderr, "       gencap -mrs MRS -o MPTFILE [-force]")
		os.Exit(2)
	}
	if set["mrs"] {
		if *out == "" || *out == "-" || *mrs < 1 || len(set) != 2 || flag.NArg() > 0 {
			usage()
		}
		if err := writeMRs(*out, *mrs); err != nil {
			fmt.Fprintln(os.Stderr, "gencap:", err)
			os.Exit(1)
		}
		return
	}
	if set["nvme"] {
		if *out == "" || *n < 0 || *nvmeQueues < 1 || *nvmeQueues > 200 || set["pairs"] || set["qps"] || set["mpt"] || flag.NArg() > 0 {
			usage()
		}
		if err := runNVMe(*out, *n, *nvmeQueues, *seed); err != nil {
			fmt.Fprintln(os.Stderr, "gencap:", err)
			os.Exit(1)
		}
		return
	}
	if set["pairs"] {
		if *out == "" || *n < 0 || *scale < 1 || *scale > maxScalePairs || set["qps"] || set["mpt"] || flag.NArg() > 0 {
			usage()
		}
		np := 4 * *scale
		if set["n"] {
			np = *n
		}
		if err := runPairs(*out, np, *scale, *seed); err != nil {
			fmt.Fprintln(os.Stderr, "gencap:", err)
			os.Exit(1)
		}
		return
	}
	if *out == "" || *n < 0 || *pairs < 1 || *pairs > 200 || flag.NArg() > 0 {
		usage()
	}
	if err := run(*out, *n, *pairs, *seed, *mpt); err != nil {
		fmt.Fprintln(os.Stderr, "gencap:", err)
		os.Exit(1)
	}
}

// writeMRs writes the MPT file of n MRs mpt.Synthetic makes to path.
func writeMRs(path string, n int) error {
	b, err := mpt.Marshal(mpt.Synthetic(n))
	if err != nil {
		return err
	}
	return writeFile(path, "-o", b)
}

// replace is -force: gencap replaces an existing output file only when
// told to.
var replace bool

// openOut starts writing path, the file of option opt, as rocetap's own
// commands write theirs (internal/outfile): into a temporary file beside
// it, renamed into place by Commit, removed by Abort; an existing file
// is replaced only with -force, and a failure leaves it as it was.
func openOut(path, opt string) (*outfile.File, error) {
	return outfile.Create(path, outfile.Options{Force: replace, Flag: opt, Program: "gencap", ForceFlag: "-force"})
}

// writeFile writes b to path (the file of option opt), as openOut does.
func writeFile(path, opt string, b []byte) error {
	f, err := openOut(path, opt)
	if err != nil {
		return err
	}
	if _, err := f.Write(b); err != nil {
		f.Abort()
		return err
	}
	return f.Commit()
}

func run(path string, n, npairs int, seed uint64, mptPath string) error {
	qps, err := buildPairs(npairs, mptPath != "")
	if err != nil {
		return err
	}
	if mptPath != "" && mptPath == path {
		return fmt.Errorf("-mpt %s: the file -o names too: give the MPT file a name of its own", mptPath)
	}
	w, err := create(path)
	if err != nil {
		return err
	}
	defer w.abort()
	var mf *outfile.File
	if mptPath != "" {
		b, err := mptFile(qps)
		if err != nil {
			return err
		}
		if mf, err = openOut(mptPath, "-mpt"); err != nil {
			return err
		}
		defer mf.Abort()
		if _, err := mf.Write(b); err != nil {
			return err
		}
	}

	r := rng(seed)
	usec := uint64(0)
	for k := 0; ; k++ {
		q := qps[r.intn(len(qps))]
		if k >= n {
			// With -mpt, finish the messages in progress so that every
			// request has its response: at most a few packets per pair
			// beyond N.
			if mptPath == "" || !anyActive(qps) {
				break
			}
			if !q.active {
				continue
			}
		}
		t := q.nextPacket(&r)
		rec := t.rec
		if q.image != nil && t.payOff > 0 && q.dataOff >= 0 {
			copy(rec[recHdr+t.payOff:recHdr+t.payOff+mtu], q.image[q.dataOff:])
		}
		usec += 1 + uint64(r.intn(2))
		binary.LittleEndian.PutUint32(rec[0:], uint32(baseUnix+usec/1e6))
		binary.LittleEndian.PutUint32(rec[4:], uint32(usec%1e6))
		finish(t)
		if _, err := w.Write(rec); err != nil {
			return err
		}
	}
	if mf != nil {
		if err := mf.Commit(); err != nil {
			return err
		}
	}
	return w.commit()
}

// output is a capture being written: to standard output, or to a file
// through openOut (nothing is left of it unless commit succeeds).
type output struct {
	*bufio.Writer
	file *outfile.File // nil: standard output
}

// create starts writing path (- for stdout) with the pcap file header
// (classic pcap, microseconds, Ethernet).
func create(path string) (*output, error) {
	o := &output{}
	var dst io.Writer = os.Stdout
	if path != "-" {
		f, err := openOut(path, "-o")
		if err != nil {
			return nil, err
		}
		o.file, dst = f, f
	}
	o.Writer = bufio.NewWriterSize(dst, 4<<20)
	var gh [24]byte
	binary.LittleEndian.PutUint32(gh[0:], 0xa1b2c3d4)
	binary.LittleEndian.PutUint16(gh[4:], 2)
	binary.LittleEndian.PutUint16(gh[6:], 4)
	binary.LittleEndian.PutUint32(gh[16:], 65535) // snaplen
	binary.LittleEndian.PutUint32(gh[20:], 1)     // LINKTYPE_ETHERNET
	if _, err := o.Write(gh[:]); err != nil {
		o.abort()
		return nil, err
	}
	return o, nil
}

// commit finishes the capture: the file, complete, takes its name.
func (o *output) commit() error {
	if err := o.Flush(); err != nil {
		return err
	}
	if o.file == nil {
		return nil
	}
	return o.file.Commit()
}

// abort removes what was written of the file (none once committed).
func (o *output) abort() {
	if o.file != nil {
		o.file.Abort()
	}
}

func anyActive(qps []*qpPair) bool {
	for _, q := range qps {
		if q.active {
			return true
		}
	}
	return false
}

// nextPacket advances q's message state machine and returns the template
// for its next packet with BTH PSN, RETH and AETH patched.
func (q *qpPair) nextPacket(r *rng) *template {
	if !q.active {
		switch x := r.intn(10); {
		case x < 4:
			q.op = kWriteFirst
		case x < 7:
			q.op = kReadRequest
		default:
			q.op = kSendFirst
		}
		if r.intn(4) == 0 {
			q.n = 1
		} else {
			q.n = 2 + r.intn(maxPkts-1)
		}
		if q.op == kSendFirst && q.n > 3 {
			q.n = 1 + q.n%3
		}
		q.i = 0
		q.psn0 = q.psn
		q.psn = (q.psn + uint32(q.n)) & psnMask
		q.va = q.vaBase + q.vaOff
		q.vaOff = (q.vaOff + uint64(q.n)*mtu) % (1 << 20)
		q.active = true
	}
	var kind int
	var psn uint32
	i, n := q.i, q.n
	q.i++
	q.dataOff = -1
	switch q.op {
	case kWriteFirst, kSendFirst:
		base := q.op
		switch {
		case i == n: // ACK of the last packet
			kind, psn = kAck, (q.psn0+uint32(n-1))&psnMask
			q.msn = (q.msn + 1) & psnMask
			q.active = false
		case n == 1:
			kind = base + 3 // Only
		case i == 0:
			kind = base // First
		case i == n-1:
			kind = base + 2 // Last
		default:
			kind = base + 1 // Middle
		}
		if kind != kAck {
			psn = (q.psn0 + uint32(i)) & psnMask
			if q.op == kWriteFirst {
				q.dataOff = int(q.va-q.vaBase) + i*mtu
			}
		}
	case kReadRequest:
		switch {
		case i == 0:
			kind, psn = kReadRequest, q.psn0
			q.msn = (q.msn + 1) & psnMask
		default:
			j := i - 1
			psn = (q.psn0 + uint32(j)) & psnMask
			q.dataOff = int(q.va-q.vaBase) + j*mtu
			switch {
			case n == 1:
				kind = kReadRespOnly
			case j == 0:
				kind = kReadRespFirst
			case j == n-1:
				kind = kReadRespLast
			default:
				kind = kReadRespMiddle
			}
			if j == n-1 {
				q.active = false
			}
		}
	}
	t := &q.tmpl[kind]
	f := t.rec[recHdr:]
	b := f[bthOff:]
	b[9], b[10], b[11] = byte(psn>>16), byte(psn>>8), byte(psn)
	if t.reth {
		binary.BigEndian.PutUint64(f[extOff:], q.va)
		binary.BigEndian.PutUint32(f[extOff+8:], q.rkey)
		binary.BigEndian.PutUint32(f[extOff+12:], uint32(n)*mtu)
	}
	if t.aeth {
		a := f[extOff+1:]
		a[0], a[1], a[2] = byte(q.msn>>16), byte(q.msn>>8), byte(q.msn)
	}
	return t
}

// finish sets the IPv4 ID (one counter per sending host side), the IPv4
// header checksum and the ICRC of a patched template.
func finish(t *template) {
	f := t.rec[recHdr:]
	ip := f[ipOff:]
	*t.ipID++
	binary.BigEndian.PutUint16(ip[4:], *t.ipID)
	ip[10], ip[11] = 0, 0
	binary.BigEndian.PutUint16(ip[10:], ipChecksum(ip[:ipLen]))
	end := len(f) - decode.ICRCLen
	crc, _ := decode.ICRCRoCEv2(ip[:end-ipOff])
	binary.LittleEndian.PutUint32(f[end:], crc)
}

func ipChecksum(h []byte) uint16 {
	var s uint32
	for i := 0; i < len(h); i += 2 {
		s += uint32(h[i])<<8 | uint32(h[i+1])
	}
	for s > 0xFFFF {
		s = s>>16 + s&0xFFFF
	}
	return ^uint16(s)
}

// imageLen is the size of a pair's memory image with -mpt: messages start
// within the first MiB (vaOff wraps there) and run up to maxPkts packets.
const imageLen = 1<<20 + maxPkts*mtu

func buildPairs(npairs int, oneResponder bool) ([]*qpPair, error) {
	qps := make([]*qpPair, npairs)
	// With one responder, the two hosts' sides are shared by every pair
	// (one IPv4 ID counter per host).
	var hostIDs [2]uint16
	for p := range qps {
		// Pairs alternate direction between hosts a and b; each host pair
		// gets its own subnet octet so there are several conversations.
		host := func(h int) side {
			return side{
				mac:  net.HardwareAddr{0x02, 0x00, 0x0a, byte(p / 4), byte(p % 4), byte(h)},
				ip:   net.IPv4(10, 1, byte(p/4), byte(1+h+2*(p%4))),
				qpn:  uint32(0x11 + 0x10*p + h),
				port: uint16(49152 + (p*7919+h*104729)%16384),
			}
		}
		q := &qpPair{req: host(p % 2), resp: host(1 - p%2)}
		if oneResponder {
			// Requester 10.1.0.1, responder 10.1.0.2 for every pair.
			q.req, q.resp = host(0), host(1)
			q.req.mac, q.req.ip = net.HardwareAddr{0x02, 0x00, 0x0a, 0x01, 0x00, 0x01}, net.IPv4(10, 1, 0, 1)
			q.resp.mac, q.resp.ip = net.HardwareAddr{0x02, 0x00, 0x0a, 0x01, 0x00, 0x02}, net.IPv4(10, 1, 0, 2)
			q.image = make([]byte, imageLen)
			r := rng(uint64(p) + 1000)
			for i := 0; i < len(q.image); i += 8 {
				binary.LittleEndian.PutUint64(q.image[i:], r.next())
			}
		}
		q.rkey = 0x1000 + uint32(p)*0x101
		q.vaBase = 0x7f3a00000000 + uint64(p)<<28
		// Start near the top of the PSN space so every pair wraps at 2^24.
		q.psn = (psnMask - 500 - uint32(p)*1000) & psnMask
		for k := 0; k < numKinds; k++ {
			t, err := q.buildTemplate(k, p)
			if err != nil {
				return nil, err
			}
			q.tmpl[k] = t
		}
		if oneResponder {
			for k := range q.tmpl {
				if isRequest(k) {
					q.tmpl[k].ipID = &hostIDs[0]
				} else {
					q.tmpl[k].ipID = &hostIDs[1]
				}
			}
		}
		qps[p] = q
	}
	return qps, nil
}

// mptFile is the MPT file (docs/mpt-format.md) of the responder of
// pairs built with oneResponder: one RC QP per pair, expecting the pair's
// first PSN, and one memory region per pair over its image.
func mptFile(qps []*qpPair) ([]byte, error) {
	addr := func(ip net.IP) decode.Node {
		a, _ := netip.AddrFromSlice(ip)
		return decode.NodeAddr(a)
	}
	f := &mpt.File{Version: 1, Config: hca.Config{Responder: addr(qps[0].resp.ip), PDs: []hca.PDConfig{{ID: 1}}}}
	for _, q := range qps {
		f.QPs = append(f.QPs, hca.QPConfig{QPN: q.resp.qpn, PD: 1, Type: decode.TransportRC,
			Access: hca.RemoteWrite | hca.RemoteRead, MTU: mtu, ExpectedPSN: decode.PSN(q.psn), HasExpectedPSN: true,
			Remote: &hca.Peer{Addr: addr(q.req.ip), QPN: q.req.qpn}})
		f.MRs = append(f.MRs, hca.MRConfig{RKey: q.rkey, LKey: q.rkey, VA: q.vaBase, Length: imageLen, PD: 1,
			Access: hca.LocalWrite | hca.RemoteWrite | hca.RemoteRead})
	}
	return mpt.Marshal(f)
}

func isRequest(kind int) bool {
	switch kind {
	case kWriteFirst, kWriteMiddle, kWriteLast, kWriteOnly, kReadRequest, kSendFirst, kSendMiddle, kSendLast, kSendOnly:
		return true
	}
	return false
}

// buildTemplate serializes one frame of the given kind with gopacket and the
// decode layers and checks its ICRC against decode.FixCRCs.
func (q *qpPair) buildTemplate(kind, pair int) (template, error) {
	src, dst := &q.req, &q.resp
	if !isRequest(kind) {
		src, dst = dst, src
	}
	op := kindOpcode[kind] | decode.Opcode(decode.TransportRC)
	eth := &layers.Ethernet{SrcMAC: src.mac, DstMAC: dst.mac, EthernetType: layers.EthernetTypeIPv4}
	ip := &layers.IPv4{Version: 4, IHL: 5, TTL: 64, Flags: layers.IPv4DontFragment, Protocol: layers.IPProtocolUDP, SrcIP: src.ip.To4(), DstIP: dst.ip.To4()}
	udp := &layers.UDP{SrcPort: layers.UDPPort(src.port), DstPort: layers.UDPPort(decode.RoCEv2Port)}
	bth := &decode.BTH{Opcode: op, PKey: 0xFFFF, DestQP: dst.qpn}
	switch kind {
	case kWriteLast, kWriteOnly, kSendLast, kSendOnly, kReadRequest:
		bth.AckReq = true
	}
	if kind == kSendLast || kind == kSendOnly {
		bth.SE = true
	}
	ls := []gopacket.SerializableLayer{eth, ip, udp, bth}
	t := template{}
	switch kind {
	case kWriteFirst, kWriteOnly, kReadRequest:
		ls = append(ls, &decode.RETH{RKey: q.rkey})
		t.reth = true
	case kReadRespFirst, kReadRespLast, kReadRespOnly, kAck:
		ls = append(ls, &decode.AETH{Syndrome: 0x1F})
		t.aeth = true
	}
	switch kind {
	case kReadRequest, kAck:
	default:
		t.payOff = -1 // set below, once the frame's length is known
		pl := make([]byte, mtu)
		r := rng(uint64(pair)<<8 | uint64(kind))
		for i := 0; i < len(pl); i += 8 {
			binary.LittleEndian.PutUint64(pl[i:], r.next())
		}
		ls = append(ls, gopacket.Payload(pl))
	}
	ls = append(ls, &decode.ICRC{})
	buf := gopacket.NewSerializeBuffer()
	if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{FixLengths: true}, ls...); err != nil {
		return t, fmt.Errorf("template %d: %w", kind, err)
	}
	frame := buf.Bytes()
	if t.payOff < 0 {
		t.payOff = len(frame) - decode.ICRCLen - mtu
	}
	t.rec = make([]byte, recHdr+len(frame))
	binary.LittleEndian.PutUint32(t.rec[8:], uint32(len(frame)))
	binary.LittleEndian.PutUint32(t.rec[12:], uint32(len(frame)))
	copy(t.rec[recHdr:], frame)
	t.ipID = &src.ipID
	// Cross-check the fast path against decode.FixCRCs.
	finish(&t)
	check := append([]byte(nil), t.rec[recHdr:]...)
	if err := decode.FixCRCs(check, 1); err != nil {
		return t, fmt.Errorf("template %d: %w", kind, err)
	}
	if string(check) != string(t.rec[recHdr:]) {
		return t, fmt.Errorf("template %d: ICRC differs from decode.FixCRCs", kind)
	}
	*t.ipID = 0
	return t, nil
}
