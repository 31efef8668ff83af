package flow_test

import (
	"encoding/json"
	"maps"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/rocetap/rocetap/decode"
	"github.com/rocetap/rocetap/flow"
)

// nfsExpect is the part of nfs_rdma_v41.expect.json the tests read: the
// RPCs the kernel's NFS client and server traced.
type nfsExpect struct {
	RPCs []struct {
		XIDHex     string `json:"xid_hex"`
		Program    string `json:"program"`
		ClientProc string `json:"client_proc"`
		ServerOps  []struct {
			Op     string `json:"op"`
			Status uint32 `json:"status"`
		} `json:"server_ops"`
		Server struct {
			SvcProc string `json:"svc_proc"`
		} `json:"server"`
		Chunks []struct {
			Kind string `json:"kind"`
			Len  uint32 `json:"len"`
			VA   string `json:"va"`
			RKey string `json:"rkey"`
		} `json:"chunks"`
		WriteSegs []struct {
			Len  uint64 `json:"len"`
			VA   string `json:"va"`
			RKey string `json:"rkey"`
		} `json:"server_write_segments"`
		ReadSegs []struct {
			Len  uint64 `json:"len"`
			VA   string `json:"va"`
			RKey string `json:"rkey"`
		} `json:"server_read_segments"`
	} `json:"rpcs"`
}

// nfsDataFrames derives, from the packets alone, the frames that move the
// data of each rkey: an RDMA WRITE message (First..Last, or Only) whose
// RETH names the key, and an RDMA READ request naming it with the READ
// responses whose PSNs fall in its range (MTU 1024).
func nfsDataFrames(t *testing.T) map[uint32][]int {
	out := map[uint32][]int{}
	var writeKey uint32
	type read struct {
		key      uint32
		psn, end uint32
	}
	var reads []read
	trackFile(t, "../testdata/ulp/nfs_rdma_v41.pcap", flow.Options{}, 0, func(p *decode.Packet) {
		if p.Has&decode.HdrBTH == 0 {
			return
		}
		op, n := p.BTH.Opcode, p.Frame.Number
		switch {
		case op.Is(decode.PropWrite):
			if p.Has&decode.HdrRETH != 0 {
				writeKey = p.RETH.RKey
			}
			out[writeKey] = append(out[writeKey], n)
		case op.Is(decode.PropRead):
			psns := (p.RETH.DMALen + 1023) / 1024
			reads = append(reads, read{p.RETH.RKey, uint32(p.BTH.PSN), uint32(p.BTH.PSN) + max(psns, 1)})
			out[p.RETH.RKey] = append(out[p.RETH.RKey], n)
		case op.Is(decode.PropReadResp):
			for _, r := range reads {
				if uint32(p.BTH.PSN) >= r.psn && uint32(p.BTH.PSN) < r.end {
					out[r.key] = append(out[r.key], n)
				}
			}
		}
	})
	return out
}

// TestRPCLinkerMatchesKernel tracks the kernel's NFSv4.1-over-RDMA mount
// and checks every RPC of its .expect.json (from the kernel's sunrpc,
// rpcrdma, svcrdma and nfsd tracepoints): found with its XID, program,
// procedure, COMPOUND ops and statuses, its reply matched, its chunks
// linked to exactly the frames that moved their data and to the bytes the
// server wrote and read.
func TestRPCLinkerMatchesKernel(t *testing.T) {
	raw, err := os.ReadFile("../testdata/ulp/nfs_rdma_v41.expect.json")
	if err != nil {
		t.Fatal(err)
	}
	var exp nfsExpect
	if err := json.Unmarshal(raw, &exp); err != nil {
		t.Fatal(err)
	}
	var events []flow.Event
	tr := trackFile(t, "../testdata/ulp/nfs_rdma_v41.pcap", flow.Options{KeepULP: true, OnEvent: func(e *flow.Event) {
		if e.Kind&(decode.EventULPError|decode.EventULPNoCommand|decode.EventULPNoCompletion) != 0 {
			events = append(events, *e)
		}
	}}, 0, nil)
	l, _ := tr.ULPLinker(decode.ULPRPCRDMA).(*flow.RPCLinker)
	if l == nil {
		t.Fatal("no RPC-over-RDMA linker: the CM REQ to port 20049 was not recognised")
	}
	byXID := map[uint32]*flow.RPCCall{}
	for _, c := range l.Calls() {
		if byXID[c.XID] != nil {
			t.Errorf("xid %#x seen twice", c.XID)
		}
		byXID[c.XID] = c
	}
	if len(l.Calls()) != len(exp.RPCs) || len(exp.RPCs) != 35 {
		t.Errorf("%d RPCs, the kernel traced %d", len(l.Calls()), len(exp.RPCs))
	}
	frames := nfsDataFrames(t)
	t.Logf("%d RPCs, %d keys with data frames", len(l.Calls()), len(frames))
	for _, e := range exp.RPCs {
		xid := uint32(hexU(t, e.XIDHex))
		c := byXID[xid]
		if c == nil {
			t.Errorf("%s %s: not found", e.XIDHex, e.ClientProc)
			continue
		}
		if !c.HasProc || c.Program != decode.NFSProgram || c.Version != 4 || e.Program != "nfsv4" {
			t.Errorf("%s: program %d v%d", e.XIDHex, c.Program, c.Version)
		}
		wantProc := map[string]uint32{"NULL": 0, "COMPOUND": 1}[e.Server.SvcProc]
		if c.Procedure != wantProc {
			t.Errorf("%s: procedure %d, want %s", e.XIDHex, c.Procedure, e.Server.SvcProc)
		}
		var wantOps []string
		for _, o := range e.ServerOps {
			wantOps = append(wantOps, strings.TrimPrefix(o.Op, "OP_"))
			if o.Status != 0 {
				t.Errorf("%s: the kernel traced a failed op; the test expects none", e.XIDHex)
			}
		}
		if got := strings.TrimPrefix(strings.TrimPrefix(c.Name(), "COMPOUND"), "NULL"); strings.Fields(got) == nil && wantOps != nil || !slices.Equal(strings.Fields(got), wantOps) {
			t.Errorf("%s: ops %q, the server executed %q", e.XIDHex, got, wantOps)
		}
		if c.ReplyFrame == 0 || c.CallFrame == 0 || c.Latency <= 0 || c.Error != "" {
			t.Errorf("%s: call frame %d reply frame %d latency %v error %q", e.XIDHex, c.CallFrame, c.ReplyFrame, c.Latency, c.Error)
		}
		var bytes uint64
		var want []int
		keys := map[uint32]bool{}
		for _, s := range e.WriteSegs {
			bytes += s.Len
			keys[uint32(hexU(t, s.RKey))] = true
		}
		for _, s := range e.ReadSegs {
			bytes += s.Len
			keys[uint32(hexU(t, s.RKey))] = true
		}
		for k := range keys {
			want = append(want, frames[k]...)
		}
		slices.Sort(want)
		if c.DataBytes != bytes || !slices.Equal(c.DataFrames, want) {
			t.Errorf("%s %s: %d bytes in frames %v; the server moved %d bytes, in frames %v", e.XIDHex, c.Name(), c.DataBytes, c.DataFrames, bytes, want)
		}
	}
	if len(events) != 0 {
		t.Errorf("ULP events on a clean mount: %+v", events)
	}
	// stats: the kernel's counts by client procedure: 9 READs moving
	// 4 KiB + 8 × 64 KiB, the 64 KiB WRITE, 35 calls all answered.
	st := l.Stats()
	if st.Calls != 35 || st.Replied != 35 || st.Errors+st.Unanswered+st.Orphans != 0 {
		t.Errorf("stats %+v", st)
	}
	for _, p := range st.ByProc {
		switch p.Ops {
		case "SEQUENCE PUTFH READ":
			if p.Count != 9 || p.Bytes != 4096+8*65536 || p.Latency.N != 9 {
				t.Errorf("READ: %+v", p)
			}
		case "SEQUENCE PUTFH WRITE":
			if p.Count != 1 || p.Bytes != 65536 {
				t.Errorf("WRITE: %+v", p)
			}
		}
	}
}

// TestRPCLinksOnEveryPacket: in one pass a call and its data packets know
// only the call; with a first pass (Options.Prior) every packet of the
// RPC names its reply, all its data frames, the bytes and the latency.
func TestRPCLinksOnEveryPacket(t *testing.T) {
	const file = "../testdata/ulp/nfs_rdma_v41.pcap"
	type links struct {
		call, reply int
		frames      []int
		bytes       uint64
		lat         bool
		chunk       decode.RPCChunkKind
	}
	run := func(o flow.Options) (*flow.Tracker, map[int]links) {
		got := map[int]links{}
		tr := trackFile(t, file, o, 0, func(p *decode.Packet) {
			if u := p.Analysis.ULP; u != nil && u.RPC != nil && u.RPC.Linked && u.RPC.XID == 0x1d94a661 {
				r := u.RPC
				got[p.Frame.Number] = links{r.CallFrame, r.ReplyFrame, slices.Clone(r.DataFrames), r.DataBytes, r.HasLatency, r.Chunk}
			}
		})
		return tr, got
	}
	first, one := run(flow.Options{KeepULP: true})
	if l := one[86]; l.call != 86 || l.reply != 0 || l.lat {
		t.Errorf("one pass, the call: %+v", l)
	}
	if l := one[93]; l.call != 86 || l.reply != 93 || !slices.Equal(l.frames, []int{88, 89, 90, 91}) || l.bytes != 4096 || !l.lat {
		t.Errorf("one pass, the reply: %+v", l)
	}
	_, two := run(flow.Options{Prior: first})
	want := []int{86, 88, 89, 90, 91, 93}
	if len(two) != len(want) {
		t.Errorf("frames of the RPC: %v, want %v", two, want)
	}
	for _, f := range want {
		l := two[f]
		if l.call != 86 || l.reply != 93 || !slices.Equal(l.frames, []int{88, 89, 90, 91}) || l.bytes != 4096 || !l.lat {
			t.Errorf("two passes, frame %d: %+v", f, l)
		}
		if (f >= 88 && f <= 91) != (l.chunk == decode.RPCChunkWrite) {
			t.Errorf("frame %d: chunk %v", f, l.chunk)
		}
	}
}

// TestRPCFindings: the synthetic NFS-over-RDMA capture raises each
// finding of the RPC linker exactly once (testdata/README.md): an NFS
// error status, an RPC not executed, an RDMA_ERROR, a call never answered,
// a reply to no call; the READ answered correctly raises none, and no
// other expert event is raised.
func TestRPCFindings(t *testing.T) {
	type ev struct {
		kind  decode.Event
		frame int
		text  string
	}
	var got []ev
	tr := trackFile(t, "../testdata/synth/nfs_rdma_errors.pcap", flow.Options{KeepULP: true, OnEvent: func(e *flow.Event) {
		if e.Kind != decode.EventConnect {
			got = append(got, ev{e.Kind, e.Frame, e.Text})
		}
	}}, 0, nil)
	want := []ev{
		{decode.EventULPError, 6, "RPC xid=0x00000101 COMPOUND SEQUENCE PUTFH LOOKUP: NFS4ERR_NOENT"},
		{decode.EventULPError, 10, "RPC xid=0x00000102 program 100003 v4 procedure 7: RPC program can't support procedure"},
		{decode.EventULPNoCommand, 14, "RPC reply xid=0x000001ff matches no call"},
		{decode.EventULPError, 25, "RPC xid=0x00000105 NULL: RDMA_ERROR ERR_VERS"},
		{decode.EventULPNoCompletion, 12, "RPC call xid=0x00000103 COMPOUND SEQUENCE PUTFH GETATTR never answered"},
	}
	if !slices.Equal(got, want) {
		t.Errorf("events:\n%v\nwant\n%v", got, want)
	}
	l := tr.ULPLinker(decode.ULPRPCRDMA).(*flow.RPCLinker)
	if st := l.Stats(); st.Calls != 5 || st.Replied != 4 || st.Errors != 3 || st.Unanswered != 1 || st.Orphans != 1 || len(st.ByError) != 3 {
		t.Errorf("stats %+v", st)
	}
	for _, c := range l.Calls() {
		if c.XID == 0x104 && (c.DataBytes != 2048 || !slices.Equal(c.DataFrames, []int{18, 19}) || c.ReplyFrame != 21 || c.Error != "") {
			t.Errorf("the READ: %+v", c)
		}
	}
}

// TestISERSMBDirectLinkers: on the synthetic iSER and SMB Direct
// connections (CM REQ to ports 3260 and 5445) every SEND gets its header
// decoded, SMB Direct's negotiate request and response told apart by who
// connected, and no expert event but the CM's is raised.
func TestISERSMBDirectLinkers(t *testing.T) {
	iser := map[int]uint8{}
	smb := map[int]decode.SMBDirectKind{}
	var events []string
	trackFile(t, "../testdata/synth/iser_smb_direct.pcap", flow.Options{OnEvent: func(e *flow.Event) {
		if e.Kind != decode.EventConnect {
			events = append(events, e.Text)
		}
	}}, 0, func(p *decode.Packet) {
		if u := p.Analysis.ULP; u != nil && u.ISER != nil {
			iser[p.Frame.Number] = u.ISER.Opcode()
		}
		if u := p.Analysis.ULP; u != nil && u.SMBDirect != nil {
			smb[p.Frame.Number] = u.SMBDirect.Kind
		}
	})
	wantISER := map[int]uint8{4: decode.ISEROpHello, 6: decode.ISEROpHelloReply, 8: decode.ISEROpControl, 10: decode.ISEROpControl}
	wantSMB := map[int]decode.SMBDirectKind{15: decode.SMBDirectNegotiateRequest, 17: decode.SMBDirectNegotiateResponse, 19: decode.SMBDirectData, 21: decode.SMBDirectData}
	if !maps.Equal(iser, wantISER) || !maps.Equal(smb, wantSMB) || len(events) != 0 {
		t.Errorf("iSER %v, SMB Direct %v, events %v", iser, smb, events)
	}
}

// TestRPCDecodeAs: a capture that starts after the connection (the CM
// exchange cut off) is decoded as RPC-over-RDMA with decode-as, and every
// RPC is found and linked as with the CM.
func TestRPCDecodeAs(t *testing.T) {
	tr := trackFile(t, "../testdata/ulp/nfs_rdma_v41.pcap", flow.Options{DecodeAs: []flow.DecodeAs{{QP: 0x18, ULP: decode.ULPRPCRDMA}}}, 4, nil)
	l, _ := tr.ULPLinker(decode.ULPRPCRDMA).(*flow.RPCLinker)
	if l == nil {
		t.Fatal("no RPC-over-RDMA linker")
	}
	st := l.Stats()
	if st.Calls != 35 || st.Replied != 35 || st.Errors+st.Unanswered+st.Orphans != 0 {
		t.Errorf("stats %+v", st)
	}
	var bytes uint64
	for _, p := range st.ByProc {
		bytes += p.Bytes
	}
	if bytes != 100+100+512+320+356+320+4096+65536+8*65536 {
		t.Errorf("%d bytes moved for the chunks", bytes)
	}
}
