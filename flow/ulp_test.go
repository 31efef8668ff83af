package flow_test

import (
	"errors"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rocetap/rocetap/capture"
	"github.com/rocetap/rocetap/decode"
	"github.com/rocetap/rocetap/flow"
)

// recLinker records what the ULP framework hands a linker.
type recLinker struct {
	msgs  []recMsg
	data  []flow.ULPData
	conns map[uint32]*flow.ULPConn
	ends  int
}

type recMsg struct {
	data   string
	frame  int // the packet it was delivered on
	side   uint8
	n      int
	frames []int
	inv    bool
	key    uint32
}

func (r *recLinker) Message(c *flow.ULPConn, m *flow.ULPMessage, p *decode.Packet) {
	r.conns[c.Session] = c
	r.msgs = append(r.msgs, recMsg{string(m.Data), p.Frame.Number, m.Side, len(m.Data), slices.Clone(m.Frames), m.Inv, m.InvKey})
}

func (r *recLinker) Data(c *flow.ULPConn, d *flow.ULPData, p *decode.Packet) {
	r.conns[c.Session] = c
	r.data = append(r.data, *d)
}

func (r *recLinker) End() { r.ends++ }

// withLinker registers rec as u's linker for the test.
func withLinker(t *testing.T, u decode.ULP, rec *recLinker) {
	t.Helper()
	old := flow.ULPLinkerFactory(u)
	flow.RegisterULP(u, func(*flow.Tracker) flow.ULPLinker { return rec })
	t.Cleanup(func() { flow.RegisterULP(u, old) })
}

// trackFile runs a tracker with o over a capture; each gets every packet
// after it was tracked.
func trackFile(t *testing.T, path string, o flow.Options, first int, each func(p *decode.Packet)) *flow.Tracker {
	t.Helper()
	r, err := capture.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	tr := flow.New(o)
	dec := decode.NewDecoder()
	p := new(decode.Packet)
	for n := 1; ; n++ {
		data, info, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if n < first {
			continue
		}
		p.Frame = decode.Frame{Number: n, Time: info.Timestamp, Len: info.Length}
		dec.Decode(p, data, info.LinkType)
		tr.Track(p)
		if each != nil {
			each(p)
		}
	}
	tr.Flush()
	return tr
}

// TestULPFramework checks the hand-off on the kernel's NVMe-oF capture
// against its .expect.json (written from the kernel's tracepoints, not
// from rocetap): the CM REQ's service ID (port 4420) names the ULP of
// both connections, the I/O queue's Connect (1024 bytes of in-capsule
// data after the 64-byte SQE, frames 83 and 84 at MTU 1024) is reassembled
// and delivered once on its last packet, a CQE sent with Invalidate
// carries the key, and the 64 KiB write's RDMA READ responses come with
// their request's key and consecutive addresses.
func TestULPFramework(t *testing.T) {
	rec := &recLinker{conns: map[uint32]*flow.ULPConn{}}
	withLinker(t, decode.ULPNVMe, rec)
	var marked []int
	trackFile(t, "../testdata/ulp/nvmeof_io.pcap", flow.Options{}, 0, func(p *decode.Packet) {
		if p.Analysis.ULP != nil {
			if p.Analysis.ULP.Proto != decode.ULPNVMe {
				t.Errorf("frame %d: ULP %v", p.Frame.Number, p.Analysis.ULP.Proto)
			}
			marked = append(marked, p.Frame.Number)
		}
	})
	if rec.ends != 1 {
		t.Errorf("End called %d times", rec.ends)
	}
	if len(rec.conns) != 2 {
		t.Fatalf("%d connections, want 2 (admin and I/O queue)", len(rec.conns))
	}
	for _, c := range rec.conns {
		if c.Learned != "cm" || c.Initiator != 0 || len(c.Private) < 10 || len(c.RepPrivate) < 4 {
			t.Errorf("session %d: learned %q initiator %d private %d/%d bytes", c.Session, c.Learned, c.Initiator, len(c.Private), len(c.RepPrivate))
		}
	}
	if len(marked) < 700 {
		t.Errorf("%d packets on ULP connections", len(marked))
	}
	// the .expect.json: 33 command capsules, 32 CQEs (the AER is never
	// completed)
	var cmds, cqes int
	var connect *recMsg
	for i, m := range rec.msgs {
		switch {
		case m.n >= 64:
			cmds++
		case m.n == 16:
			cqes++
		default:
			t.Errorf("message of %d bytes in frame %d", m.n, m.frame)
		}
		if m.frame == 84 {
			connect = &rec.msgs[i]
		}
		if m.frame == 83 {
			t.Error("a message delivered on a SEND First")
		}
	}
	if cmds != 33 || cqes != 32 {
		t.Errorf("%d commands and %d CQEs, want 33 and 32", cmds, cqes)
	}
	if connect == nil || connect.n != 64+1024 || !slices.Equal(connect.frames, []int{83, 84}) || connect.side != 0 {
		t.Errorf("I/O queue Connect: %+v, want 1088 bytes from frames 83, 84 sent by side A", connect)
	}
	var inv bool
	for _, m := range rec.msgs {
		if m.frame == 146 {
			inv = m.inv && m.key == 0x2317 && m.side == 1
		}
	}
	if !inv {
		t.Error("frame 146: want the CQE with Invalidate of key 0x2317 from side B")
	}
	// the write of 64 KiB at LBA 2048: key 0x231b, address 0xffff8a57053b2000
	var req, resp int
	var bytes uint64
	next := uint64(0xffff8a57053b2000)
	for _, d := range rec.data {
		if d.RKey != 0x231b {
			continue
		}
		if d.Op != decode.MPTOpRead {
			t.Fatalf("key 0x231b: op %v", d.Op)
		}
		if d.Request {
			req++
			continue
		}
		resp++
		if d.VA != next {
			t.Errorf("READ response at %#x, want %#x", d.VA, next)
		}
		next += d.Len
		bytes += d.Len
	}
	if req == 0 || resp < 64 || bytes != 65536 {
		t.Errorf("key 0x231b: %d READ requests, %d responses, %d bytes; want 65536 bytes", req, resp, bytes)
	}
}

// TestULPDecodeAs starts the capture after both connections were set up
// (frame 139, the first I/O read): without a decode-as nothing is a ULP
// connection; with -d infiniband.bth.destqp==0x12,nvme-rdma the I/O
// queue's packets are.
func TestULPDecodeAs(t *testing.T) {
	for _, c := range []struct {
		name string
		da   []flow.DecodeAs
		want bool
	}{{"none", nil, false}, {"qp 0x12", []flow.DecodeAs{{QP: 0x12, ULP: decode.ULPNVMe}}, true}} {
		t.Run(c.name, func(t *testing.T) {
			rec := &recLinker{conns: map[uint32]*flow.ULPConn{}}
			withLinker(t, decode.ULPNVMe, rec)
			trackFile(t, "../testdata/ulp/nvmeof_io.pcap", flow.Options{DecodeAs: c.da}, 139, nil)
			if got := len(rec.msgs) > 0; got != c.want {
				t.Fatalf("%d messages", len(rec.msgs))
			}
			for _, conn := range rec.conns {
				if conn.Learned != "decode-as" || conn.Initiator != -1 {
					t.Errorf("learned %q initiator %d", conn.Learned, conn.Initiator)
				}
			}
		})
	}
}

func TestParseDecodeAs(t *testing.T) {
	for _, c := range []struct {
		in      string
		want    flow.DecodeAs
		ok, err bool
	}{
		{"infiniband.bth.destqp==0x12,nvme-rdma", flow.DecodeAs{QP: 0x12, ULP: decode.ULPNVMe}, true, false},
		{"infiniband.bth.destqp==18,rpcordma", flow.DecodeAs{QP: 18, ULP: decode.ULPRPCRDMA}, true, false},
		{"infiniband.bth.destqp==0x12,NVMe", flow.DecodeAs{QP: 0x12, ULP: decode.ULPNVMe}, true, false},
		{"infiniband.bth.destqp==0x12,smb_direct", flow.DecodeAs{QP: 0x12, ULP: decode.ULPSMBDirect}, true, false},
		{"infiniband.bth.destqp==0x12,iser", flow.DecodeAs{QP: 0x12, ULP: decode.ULPISER}, true, false},
		{"infiniband.bth.destqp==0x12,http", flow.DecodeAs{}, true, true},
		{"infiniband.bth.destqp==0x1000000,nvme", flow.DecodeAs{}, true, true},
		{"infiniband.bth.destqp==x,nvme", flow.DecodeAs{}, true, true},
		{"infiniband.bth.destqp==0x12", flow.DecodeAs{}, true, true},
		{"udp.port==4792,infiniband", flow.DecodeAs{}, false, false},
	} {
		got, ok, err := flow.ParseDecodeAs(c.in)
		if got != c.want || ok != c.ok || (err != nil) != c.err {
			t.Errorf("%q: %+v %v %v", c.in, got, ok, err)
		}
	}
}

// TestULPReassembly feeds SEND First/Middle/Last sequences to a decode-as
// connection: a whole message is delivered once, on its last packet, with
// its bytes in order; a message with a PSN missing or started before the
// capture is not delivered; a retransmitted copy of a delivered message
// is not delivered again.
func TestULPReassembly(t *testing.T) {
	type pkt struct {
		op  uint8
		psn uint32
		pay string
	}
	for _, c := range []struct {
		name string
		pkts []pkt
		want []string // messages delivered
	}{
		{"whole", []pkt{{decode.OpSendFirst, 10, "ab"}, {decode.OpSendMiddle, 11, "cd"}, {decode.OpSendLast, 12, "ef"}}, []string{"abcdef"}},
		{"only", []pkt{{decode.OpSendOnly, 10, "xy"}, {decode.OpSendOnly, 11, "z"}}, []string{"xy", "z"}},
		{"gap", []pkt{{decode.OpSendFirst, 10, "ab"}, {decode.OpSendLast, 12, "ef"}, {decode.OpSendOnly, 13, "ok"}}, []string{"ok"}},
		{"mid-stream", []pkt{{decode.OpSendMiddle, 11, "cd"}, {decode.OpSendLast, 12, "ef"}, {decode.OpSendOnly, 13, "ok"}}, []string{"ok"}},
		{"retransmitted", []pkt{{decode.OpSendFirst, 10, "ab"}, {decode.OpSendLast, 11, "cd"}, {decode.OpSendFirst, 10, "ab"}, {decode.OpSendLast, 11, "cd"}, {decode.OpSendOnly, 12, "ok"}}, []string{"abcd", "ok"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			rec := &recLinker{conns: map[uint32]*flow.ULPConn{}}
			withLinker(t, decode.ULPISER, rec)
			tr := flow.New(flow.Options{DecodeAs: []flow.DecodeAs{{QP: 0x13, ULP: decode.ULPISER}}, MaxOutstanding: 16})
			for i, k := range c.pkts {
				var p decode.Packet
				p.Frame = decode.Frame{Number: i + 1, Time: epochULP.Add(time.Duration(i) * time.Millisecond), Len: 100}
				p.Has = decode.HdrEth | decode.HdrIPv4 | decode.HdrUDP | decode.HdrBTH
				p.IPv4.Src, p.IPv4.Dst = [4]byte{10, 0, 0, 1}, [4]byte{10, 0, 0, 2}
				p.BTH = decode.BTH{Opcode: decode.TransportRC.Opcode(k.op), PSN: decode.PSN(k.psn), DestQP: 0x13}
				p.Payload = []byte(k.pay)
				n := len(rec.msgs)
				tr.Track(&p)
				if len(rec.msgs) > n && !p.BTH.Opcode.Is(decode.PropEnd) {
					t.Errorf("packet %d: a message delivered on a packet that does not end one", i+1)
				}
			}
			var got []string
			for _, m := range rec.msgs {
				got = append(got, m.data)
			}
			if strings.Join(got, "|") != strings.Join(c.want, "|") {
				t.Errorf("delivered %q, want %q", got, c.want)
			}
		})
	}
}

var epochULP = time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC)
