package synth

import (
	"encoding/binary"
	"fmt"
	"net"
	"time"

	"github.com/rocetap/rocetap/decode"
)

// Captures for the fabric-health analysis (flow's cc.go and pfc.go):
// DCQCN congestion control and PFC, with known marks, CNPs, rates and
// pauses. Frames are placed at exact times (µs from the epoch), so the
// expected rates and pause times follow from the timeline.

// timeline collects frames at given times and adds them in time order.
type timeline struct {
	b *fileBuilder
}

// at adds fr at t µs after the epoch (callers add in time order).
func (tl *timeline) at(us int, note string, fr Frame) {
	tl.b.next = epoch.Add(time.Duration(us) * time.Microsecond)
	tl.b.add(note, fr)
}

// CCWriteLen is the payload of the WRITEs of ccDCQCN: a 90-byte frame
// over IPv4 (14 + 20 + 8 + 12 BTH + 16 RETH + 16 + 4 ICRC), 110 over
// IPv6: 20 µs apart they send 36 Mb/s (IPv4).
const CCWriteLen = 16

// ccFlow is one RC connection of ccDCQCN: WRITE Only requests from A,
// every fifth and the last asking for an ACK, which B sends 2 µs later.
type ccFlow struct {
	c  rcConn
	tl *timeline
	n  int
}

func (f *ccFlow) write(us int, ecn uint8, note string) {
	f.n++
	f.send(us, ecn, note, f.n%5 == 0)
}

// writeAck is a WRITE that asks for an ACK (the last of a flow).
func (f *ccFlow) writeAck(us int, ecn uint8, note string) {
	f.n++
	f.send(us, ecn, note, true)
}

func (f *ccFlow) send(us int, ecn uint8, note string, ack bool) {
	fr := f.c.req(rc(decode.OpWriteOnly), CCWriteLen, ack, Transport{RETH: reth(0x10000, 0x77, CCWriteLen)})
	fr.ECN = ecn
	f.tl.at(us, note, fr)
	if ack {
		f.ackNow(us + 2)
	}
}

// ackNow acknowledges every WRITE so far: its MSN counts them.
func (f *ccFlow) ackNow(us int) {
	f.c.msn = uint32(f.n) - 1
	f.tl.at(us, "ACK", f.c.ack((f.c.psn-1)&0xFFFFFF, 0x1F))
}

// cnp returns a CNP from B to A's QP qp (DSCP 48, as NICs send them).
func (f *ccFlow) cnp(qp uint32) RoCEv2 {
	s := f.c.v2
	s.Reverse, s.DSCP, s.ECN = true, 48, 0
	s.T = Transport{BTH: decode.BTH{Opcode: decode.CNP, PKey: 0xFFFF, DestQP: qp, BECN: true}}
	return s
}

// ccDCQCN: five RC connections from A to B, each showing one case of
// DCQCN (times in µs from the first frame; W is the 100 µs rate window,
// whose estimate before a CNP is about 5.8 frames here):
//
//   - QP 0x101 (IPv4), 0-210: WRITEs 20 µs apart; the one at 100 is
//     marked CE; B's CNP at 104; A then sends every 40 µs (2 frames in
//     the window after the CNP): the clean case (CE→CNP 4 µs, rate cut).
//   - QP 0x201 (IPv6), 1000-1210: the same, but A sends every 15 µs
//     after the CNP (7 frames): no_rate_reduction.
//   - QP 0x301 (IPv4), 2000-3250: a CE mark at 2000 and no CNP; WRITEs
//     250 µs apart: ce_without_cnp on the first packet of the session
//     past 1 ms (B's ACK at 3002).
//   - QP 0x401 (IPv6), 3500-3710: a CNP at 3604 with no CE mark (as the
//     sender's host sees it): cnp_without_ce; A slows down.
//   - 3800: a CNP to QP 0x999, which no flow has: cnp_unknown_qp.
func ccDCQCN() (File, error) {
	b := newFile("cc_dcqcn.pcap", PcapNano, decode.LinkTypeEthernet)
	tl := &timeline{b}
	flow := func(qpA uint32, v6 bool) *ccFlow {
		return &ccFlow{c: rcConn{qpA: qpA, qpB: qpA + 1, pkey: 0xFFFF, psn: 100, v2: RoCEv2{IPv6: v6, DSCP: 26, ECN: 2}}, tl: tl}
	}
	f := flow(0x101, false)
	for us := 0; us < 100; us += 20 {
		f.write(us, 2, "WRITE Only, ECT(0)")
	}
	f.write(100, 3, "WRITE Only, ECN CE")
	tl.at(104, "CNP to QP 0x000101, 4 µs after the CE mark", f.cnp(0x101))
	f.write(130, 2, "WRITE Only, slower after the CNP")
	f.write(170, 2, "WRITE Only, slower after the CNP")
	f.writeAck(210, 2, "WRITE Only, past the window after the CNP")

	f = flow(0x201, true)
	for us := 1000; us < 1100; us += 20 {
		f.write(us, 2, "WRITE Only, ECT(0), IPv6")
	}
	f.write(1100, 3, "WRITE Only, ECN CE, IPv6")
	tl.at(1104, "CNP to QP 0x000201", f.cnp(0x201))
	for us := 1110; us < 1210; us += 15 {
		f.write(us, 2, "WRITE Only, faster after the CNP")
	}
	f.writeAck(1210, 2, "WRITE Only, past the window after the CNP")

	f = flow(0x301, false)
	f.write(2000, 3, "WRITE Only, ECN CE, never answered by a CNP")
	for us := 2250; us < 3250; us += 250 {
		f.write(us, 2, "WRITE Only")
	}
	f.writeAck(3250, 2, "WRITE Only, 1.25 ms after the CE mark")

	f = flow(0x401, true)
	for us := 3500; us < 3600; us += 20 {
		f.write(us, 0, "WRITE Only, not ECN-capable, IPv6")
	}
	tl.at(3604, "CNP to QP 0x000401, no CE mark seen", f.cnp(0x401))
	f.write(3630, 0, "WRITE Only, slower after the CNP")
	f.write(3670, 0, "WRITE Only, slower after the CNP")
	f.writeAck(3710, 0, "WRITE Only, past the window after the CNP")

	tl.at(3800, "CNP to QP 0x000999, which no flow has", flow(0x999, false).cnp(0x999))
	return b.done()
}

// PFCSpeed is the link speed (if_speed) of pfcPauses's interface: a
// quantum is 51.2 ns, 0xFFFF quanta 3.355 ms.
const PFCSpeed = 10_000_000_000

// switchMAC is the switch port that sends the pause frames of pfcPauses.
var switchMAC = net.HardwareAddr{0x02, 0x00, 0x5e, 0x10, 0x00, 0xfe}

// pfcPauses: pcapng, one Ethernet interface at 10 Gb/s (if_speed); RC
// WRITEs from A at DSCP 26 (priority 3) answered by B, and the switch's
// pause frames (times in µs):
//
//   - 100: XOFF priority 3 (0xFFFF quanta: 3.355 ms); 200: a WRITE from A
//     (pfc_paused_traffic); 300: XON priority 3 (paused 200 µs), then B's
//     ACK; 400: a WRITE (clean).
//   - 1000-121000: XOFF priority 3 refreshed every 2 ms, then XON: paused
//     for 120 ms continuously, a pfc_storm at the first refresh past
//     100 ms (103000, 102 ms into the pause).
//   - 122000: XOFF priority 5 for 1000 quanta (51.2 µs): no RoCE is sent
//     at priority 5: pfc_unused_priority. Then a WRITE.
func pfcPauses() (File, error) {
	b := newFile("pfc_pauses.pcapng", PcapNG, 0)
	b.f.Ifaces = []Iface{{Name: "eth0", LinkType: decode.LinkTypeEthernet, Speed: PFCSpeed}}
	tl := &timeline{b}
	f := &ccFlow{c: rcConn{qpA: 0x501, qpB: 0x502, pkey: 0xFFFF, psn: 0, v2: RoCEv2{DSCP: 26, ECN: 2}}, tl: tl}
	write := func(us int, note string) {
		f.n++
		tl.at(us, note, f.c.req(rc(decode.OpWriteOnly), 64, true, Transport{RETH: reth(0x10000, 0x77, 64)}))
	}
	w := func(us int, note string) {
		write(us, note)
		f.ackNow(us + 2)
	}
	xoff := func(prio int, q uint16) PFC {
		p := PFC{ClassEnable: 1 << prio, Src: switchMAC}
		p.Quanta[prio] = q
		return p
	}
	w(0, "WRITE Only, DSCP 26 (priority 3)")
	tl.at(100, "PFC XOFF priority 3, 0xFFFF quanta", xoff(3, 0xFFFF))
	write(200, "WRITE Only while priority 3 is paused")
	tl.at(300, "PFC XON priority 3", xoff(3, 0))
	f.ackNow(302)
	w(400, "WRITE Only")
	for us := 1000; us <= 119000; us += 2000 {
		tl.at(us, "PFC XOFF priority 3, refreshed", xoff(3, 0xFFFF))
	}
	tl.at(121000, "PFC XON priority 3", xoff(3, 0))
	tl.at(122000, "PFC XOFF priority 5, 1000 quanta", xoff(5, 1000))
	w(123000, "WRITE Only")
	return b.done()
}

// setSpeeds adds an if_speed option (code 8, 8 bytes) to the Interface
// Description Block of each interface with a Speed, in a little-endian
// pcapng file as pcapgo writes it.
func setSpeeds(b []byte, ifaces []Iface) ([]byte, error) {
	le := binary.LittleEndian
	out := make([]byte, 0, len(b)+16*len(ifaces))
	idb := 0
	for len(b) >= 12 {
		typ, n := le.Uint32(b), int(le.Uint32(b[4:]))
		if n < 12 || n > len(b) {
			return nil, fmt.Errorf("pcapng block of %d bytes", n)
		}
		blk := b[:n]
		b = b[n:]
		if typ != 1 {
			out = append(out, blk...)
			continue
		}
		sp := ifaces[idb].Speed
		idb++
		if sp == 0 {
			out = append(out, blk...)
			continue
		}
		m := n + 12
		out = le.AppendUint32(out, 1)
		out = le.AppendUint32(out, uint32(m))
		out = append(out, blk[8:16]...) // link type, reserved, snaplen
		out = le.AppendUint16(out, 8)
		out = le.AppendUint16(out, 8)
		out = le.AppendUint64(out, sp)
		out = append(out, blk[16:n-4]...) // the other options
		out = le.AppendUint32(out, uint32(m))
	}
	return out, nil
}
