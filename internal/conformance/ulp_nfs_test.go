package conformance

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/rocetap/rocetap/decode"
	"github.com/rocetap/rocetap/internal/testcap"
)

// nfsCapture is the kernel's NFSv4.1-over-RDMA mount (testdata/README.md).
const nfsCapture = "../../testdata/ulp/nfs_rdma_v41.pcap"

// tsharkMalformedNFS are the frames tshark 4.0 marks malformed in
// nfsCapture: READ replies whose data came by RDMA WRITE into a write
// chunk, which it decodes twice (README: where rocetap and tshark differ).
var tsharkMalformedNFS = map[int]bool{93: true, 257: true, 329: true, 411: true, 481: true, 551: true, 621: true, 691: true, 761: true}

// tsharkNoRPC are the frames whose RPC tshark 4.0 decodes on another
// frame: the WRITE call whose data is in a read chunk, which tshark
// decodes on the last RDMA READ response of the chunk (174), once it has
// rebuilt the message with the data; rocetap decodes it on its SEND (105)
// and links the READ packets to it.
var tsharkNoRPC = map[int]bool{105: true, 174: true}

// nfsDecoderFields are the tshark fields the pure decoders
// (decode.RPCRDMA, decode.RPCMsg, decode.NFS4Compound) must reproduce.
var nfsDecoderFields = []string{
	"rpcordma.xid", "rpcordma.version", "rpcordma.flow_control", "rpcordma.msg_type",
	"rpcordma.reads_count", "rpcordma.writes_count", "rpcordma.reply_count", "rpcordma.segment_count",
	"rpcordma.position", "rpcordma.rdma_handle", "rpcordma.rdma_length", "rpcordma.rdma_offset",
	"rpc.xid", "rpc.msgtyp", "rpc.version", "rpc.program", "rpc.programversion", "rpc.procedure",
	"rpc.replystat", "rpc.state_accept", "nfs.minorversion", "nfs.opcode", "nfs.status",
}

// TestNFSDecodersMatchTshark decodes every SEND of the real NFS capture
// with the pure decoders and compares each value with tshark's rpcordma,
// rpc and nfs dissectors (their heuristics on, as tshark runs by
// default). It compares the RPC and NFS layers of RDMA_MSG messages only:
// an RDMA_NOMSG reply's RPC is in its reply chunk, which the linker
// gathers (TestNFSLinkedFieldsMatchTshark).
func TestNFSDecodersMatchTshark(t *testing.T) {
	ts := testcap.Tshark(t)
	want := fieldsOf(t, tsharkRun(t, ts), nfsCapture, nfsDecoderFields)
	procs := map[uint32][3]uint32{} // xid -> program, version, procedure of the call
	var p decode.Packet
	var r decode.RPCRDMA
	var m decode.RPCMsg
	var c decode.NFS4Compound
	checked, rpcs := 0, 0
	for _, f := range testcap.ReadPcap(t, nfsCapture) {
		decode.Decode(&p, f.Data, f.LinkType)
		if p.Has&decode.HdrBTH == 0 || !p.BTH.Opcode.Is(decode.PropSend) || p.Has&decode.HdrMAD != 0 {
			continue
		}
		got := make([]string, len(nfsDecoderFields))
		if err := r.Decode(p.Payload); err != nil {
			t.Errorf("frame %d: %v", f.Number, err)
			continue
		}
		set := func(name string, vals ...string) {
			for i, n := range nfsDecoderFields {
				if n == name {
					got[i] = strings.Join(vals, ",")
					return
				}
			}
			t.Fatalf("no field %s", name)
		}
		hex32 := func(v uint32) string { return fmt.Sprintf("0x%08x", v) }
		dec := func(v uint32) string { return strconv.FormatUint(uint64(v), 10) }
		set("rpcordma.xid", hex32(r.XID))
		set("rpcordma.version", dec(r.Version))
		set("rpcordma.flow_control", dec(r.Credits))
		set("rpcordma.msg_type", dec(r.Proc))
		set("rpcordma.reads_count", strconv.Itoa(r.NReads))
		set("rpcordma.writes_count", strconv.Itoa(len(r.Writes)))
		set("rpcordma.reply_count", strconv.Itoa(map[bool]int{false: 0, true: 1}[r.HasReply]))
		var counts, pos, handles, lens, offs []string
		for _, s := range r.Reads() {
			pos = append(pos, dec(s.Position))
		}
		for _, s := range r.Segs {
			handles = append(handles, hex32(s.Handle))
			lens = append(lens, dec(s.Length))
			offs = append(offs, fmt.Sprintf("0x%016x", s.Offset))
		}
		for _, w := range r.Writes {
			counts = append(counts, dec(w.Count))
		}
		if r.HasReply {
			counts = append(counts, dec(r.Reply.Count))
		}
		set("rpcordma.segment_count", counts...)
		set("rpcordma.position", pos...)
		set("rpcordma.rdma_handle", handles...)
		set("rpcordma.rdma_length", lens...)
		set("rpcordma.rdma_offset", offs...)
		tsharkRPC := r.Proc == decode.RPCRDMAMsg && !tsharkMalformedNFS[f.Number] && !tsharkNoRPC[f.Number]
		if r.Proc == decode.RPCRDMAMsg && !tsharkMalformedNFS[f.Number] {
			if err := m.Decode(r.Body); err != nil {
				t.Errorf("frame %d: rpc: %v", f.Number, err)
			}
			if tsharkRPC {
				rpcs++
			}
			set("rpc.xid", hex32(m.XID))
			set("rpc.msgtyp", dec(m.MsgType))
			call := [3]uint32{m.Program, m.ProgVersion, m.Procedure}
			if m.MsgType == decode.RPCCall {
				procs[m.XID] = call
				set("rpc.version", dec(m.RPCVersion))
			} else {
				call = procs[m.XID]
				set("rpc.replystat", dec(m.ReplyStat))
				set("rpc.state_accept", dec(m.AcceptStat))
			}
			set("rpc.program", dec(call[0]))
			set("rpc.programversion", dec(call[1]))
			if call[0] == decode.NFSProgram {
				// tshark's NFS tree repeats it ("[Program Version: 4]").
				set("rpc.programversion", dec(call[1]), dec(call[1]))
			}
			set("rpc.procedure", dec(call[2]))
			if call[0] == decode.NFSProgram && call[1] == 4 && call[2] == decode.NFS4ProcCompound {
				var err error
				if m.MsgType == decode.RPCCall {
					err = c.DecodeCall(m.Body)
					set("nfs.minorversion", dec(c.MinorVersion))
				} else {
					err = c.DecodeReply(m.Body)
				}
				// A WRITE's data is in its read chunk, not in the message:
				// the last op's arguments end early.
				if err != nil && !(len(r.Reads()) > 0 && len(c.Ops) == int(c.Count)) {
					t.Errorf("frame %d: nfs: %v", f.Number, err)
				}
				var ops, sts []string
				if c.Reply {
					sts = append(sts, dec(c.Status))
				}
				attrs := c.AttrStatus
				for _, o := range c.Ops {
					ops = append(ops, dec(o.Opcode))
					if o.HasStatus {
						sts = append(sts, dec(o.Status))
					}
					for _, a := range attrs[:o.Attrs] {
						sts = append(sts, dec(a))
					}
					attrs = attrs[o.Attrs:]
				}
				set("nfs.opcode", ops...)
				set("nfs.status", sts...)
			}
		}
		w, ok := want[f.Number]
		if !ok {
			t.Errorf("frame %d: tshark has no such frame", f.Number)
			continue
		}
		for i, n := range nfsDecoderFields {
			tsv := w[i]
			if strings.HasPrefix(n, "rpc.") || strings.HasPrefix(n, "nfs.") {
				if !tsharkRPC {
					continue
				}
			}
			if got[i] != tsv {
				t.Errorf("frame %d %s: rocetap %q, tshark %q", f.Number, n, got[i], tsv)
			}
		}
		checked++
	}
	if checked != 70 || rpcs == 0 {
		t.Errorf("checked %d RPC-over-RDMA messages (%d with an RPC), want the 70 tshark sees", checked, rpcs)
	}
	t.Logf("%d RPC-over-RDMA messages, %d RPC messages compared with tshark", checked, rpcs)
}

// TestNFSLinkedFieldsMatchTshark runs rocetap decode (which tracks the
// connection, reassembles and links) and tshark over the NFS capture and
// compares every rpcordma.*, rpc.* and nfs.* field rocetap registers on
// every frame: the RDMA_NOMSG replies included, whose RPC both read from
// the reply chunk the server RDMA WRITEs. Left out: the RPC and NFS layers
// of the frames where tshark fails (tsharkMalformedNFS, tsharkNoRPC).
func TestNFSLinkedFieldsMatchTshark(t *testing.T) {
	ts := testcap.Tshark(t)
	known := tsharkFields(t, ts)
	var names []string
	for _, f := range decode.Fields() {
		a := f.Abbrev
		if _, ok := known[a]; ok && f.Type != decode.FTProtocol && (strings.HasPrefix(a, "rpcordma.") || strings.HasPrefix(a, "rpc.") || strings.HasPrefix(a, "nfs.")) {
			names = append(names, a)
		}
	}
	if len(names) < 25 {
		t.Fatalf("only %d fields: %v", len(names), names)
	}
	want := fieldsOf(t, tsharkRun(t, ts), nfsCapture, names)
	got := fieldsOf(t, rocetapDecode(t), nfsCapture, names)
	if len(want) != len(got) {
		t.Fatalf("tshark %d frames, rocetap %d", len(want), len(got))
	}
	cells, rpcFrames := 0, 0
	for frame, w := range want {
		g, ok := got[frame]
		if !ok {
			t.Fatalf("frame %d: not in rocetap's output", frame)
		}
		for j, n := range names {
			if (strings.HasPrefix(n, "rpc.") || strings.HasPrefix(n, "nfs.")) && (tsharkMalformedNFS[frame] || tsharkNoRPC[frame]) {
				continue
			}
			if g[j] != w[j] {
				t.Errorf("frame %d %s: rocetap %q, tshark %q", frame, n, g[j], w[j])
			}
			if w[j] != "" {
				cells++
				if n == "rpc.xid" {
					rpcFrames++
				}
			}
		}
	}
	if rpcFrames < 60 {
		t.Errorf("tshark decoded the RPC of %d frames only", rpcFrames)
	}
	t.Logf("%d fields, %d values agree on %d frames (%d with an RPC)", len(names), cells, len(want), rpcFrames)
}

// ulpField reports the fields of the ULPs over RDMA that the ULP tests
// compare (TestNFSLinkedFieldsMatchTshark, TestISERSMBDirectMatchTshark):
// they need tshark's ULP dissectors, which TestFieldsMatchTshark turns off.
func ulpField(name string) bool {
	for _, p := range []string{"rpcordma.", "rpc.", "nfs.", "iser.", "smb_direct."} {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// TestISERSMBDirectMatchTshark compares every iser.* and smb_direct.*
// field rocetap registers with tshark's (heuristics on) on the synthetic
// iSER and SMB Direct connections (testdata/README.md), every frame.
func TestISERSMBDirectMatchTshark(t *testing.T) {
	ts := testcap.Tshark(t)
	known := tsharkFields(t, ts)
	const file = "../../testdata/synth/iser_smb_direct.pcap"
	var names []string
	for _, f := range decode.Fields() {
		a := f.Abbrev
		if _, ok := known[a]; ok && f.Type != decode.FTProtocol && f.Type != decode.FTNone && (strings.HasPrefix(a, "iser.") || strings.HasPrefix(a, "smb_direct.")) {
			names = append(names, a)
		}
	}
	if len(names) != 11+15 {
		t.Errorf("%d fields: %v", len(names), names)
	}
	want := fieldsOf(t, tsharkRun(t, ts), file, names)
	got := fieldsOf(t, rocetapDecode(t), file, names)
	if len(want) != len(got) {
		t.Fatalf("tshark %d frames, rocetap %d", len(want), len(got))
	}
	cells := 0
	for frame, w := range want {
		g, ok := got[frame]
		if !ok {
			t.Fatalf("frame %d: not in rocetap's output", frame)
		}
		for j, n := range names {
			if g[j] != w[j] {
				t.Errorf("frame %d %s: rocetap %q, tshark %q", frame, n, g[j], w[j])
			}
			if w[j] != "" {
				cells++
			}
		}
	}
	if cells < 40 {
		t.Errorf("only %d values compared", cells)
	}
	t.Logf("%d fields, %d values agree on %d frames", len(names), cells, len(want))
}
