package printer

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/rocetap/rocetap/decode"
	"github.com/rocetap/rocetap/flow"
)

func TestAppendRPCStats(t *testing.T) {
	st := &flow.RPCStats{Calls: 3, Replied: 2, Errors: 1, Unanswered: 1, Orphans: 1,
		ByProc:  []flow.RPCProcStats{{Procedure: "COMPOUND", Ops: "SEQUENCE PUTFH READ", Count: 2, Errors: 1, Bytes: 4096}, {Procedure: "NULL", Count: 1}},
		ByOp:    []flow.RPCCount{{Name: "SEQUENCE", Count: 2}, {Name: "READ", Count: 2}},
		ByError: []flow.RPCCount{{Name: "NFS4ERR_IO", Count: 1}}}
	st.ByProc[0].Latency.Add(2 * time.Millisecond)
	st.ByProc[0].Latency.Add(4 * time.Millisecond)
	want := `
RPC over RDMA: 3 calls, 2 answered, 1 failed, 1 never answered, 1 replies without a call
  procedure  NFSv4 ops            calls  errors  latency min  median  p99  max  bytes
  COMPOUND   SEQUENCE PUTFH READ      2       1          2ms     2ms  4ms  4ms   4096
  NULL       -                        1       0            -       -    -    -      0
  NFSv4 ops: SEQUENCE 2, READ 2
  errors: NFS4ERR_IO 1
`
	if got := string(AppendRPCStats(nil, st)); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if got := AppendRPCStats(nil, &flow.RPCStats{}); len(got) != 0 {
		t.Errorf("no RPC: %q", got)
	}
	tail := AppendRPCStatsJSON([]byte("\n}\n"), st)
	var j struct {
		RPC RPCStatsJSON `json:"rpc"`
	}
	if err := json.Unmarshal(append([]byte("{\"x\": 1"), tail...), &j); err != nil || j.RPC.Calls != 3 || j.RPC.ByProc[0].Latency.Count != 2 {
		t.Errorf("%v %+v\n%s", err, j, tail)
	}
}

func TestRPCInfo(t *testing.T) {
	call := &decode.RPCInfo{HasHdr: true, HasRPC: true, HasProc: true, Program: decode.NFSProgram, Version: 4, Procedure: 1, HasNFS: true}
	call.Hdr.XID, call.RPC.XID, call.RPC.Have = 0x1d94a661, 0x1d94a661, 8
	call.NFS.Ops = []decode.NFS4Op{{Opcode: 53}, {Opcode: 22}, {Opcode: 25}}
	reply := *call
	reply.RPC.MsgType, reply.RPC.Have = decode.RPCReply, 5
	reply.NFS.Reply, reply.NFS.Have, reply.NFS.Status = true, 3, 5
	data := &decode.RPCInfo{Linked: true, XID: 0x1d94a661, Chunk: decode.RPCChunkWrite}
	tests := []struct {
		in   *decode.ULPInfo
		want string
	}{
		{&decode.ULPInfo{Proto: decode.ULPRPCRDMA, RPC: call}, "NFS COMPOUND SEQUENCE PUTFH READ xid=0x1d94a661 Call"},
		{&decode.ULPInfo{Proto: decode.ULPRPCRDMA, RPC: &reply}, "NFS COMPOUND SEQUENCE PUTFH READ xid=0x1d94a661 Reply NFS4ERR_IO"},
		{&decode.ULPInfo{Proto: decode.ULPRPCRDMA, RPC: data}, "RPC write chunk of xid=0x1d94a661"},
		{&decode.ULPInfo{Proto: decode.ULPISER, ISER: &decode.ISER{Flags: 0x20}}, "iSER Hello Message"},
		{&decode.ULPInfo{Proto: decode.ULPSMBDirect, SMBDirect: &decode.SMBDirect{Kind: decode.SMBDirectData}}, "SMB Direct DataMessage"},
		{&decode.ULPInfo{Proto: decode.ULPRPCRDMA}, ""},
	}
	for _, tt := range tests {
		var p decode.Packet
		p.Analysis.ULP = tt.in
		got := strings.TrimPrefix(string(appendULP(nil, &p)), " | ")
		if got != tt.want {
			t.Errorf("got %q, want %q", got, tt.want)
		}
	}
}
