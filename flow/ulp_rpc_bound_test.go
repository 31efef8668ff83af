package flow_test

import (
	"encoding/binary"
	"slices"
	"testing"

	"github.com/rocetap/rocetap/decode"
	"github.com/rocetap/rocetap/flow"
)

// be32 appends 32-bit XDR words to b.
func be32(b []byte, v ...uint32) []byte {
	for _, w := range v {
		b = binary.BigEndian.AppendUint32(b, w)
	}
	return b
}

// rpcReadCall is an RDMA_MSG carrying a COMPOUND call with one write
// chunk (handle key, 4 KiB at 0x1000); rpcReadReply its reply.
func rpcReadCall(xid, key uint32) []byte {
	b := be32(nil, xid, 1, 32, uint32(decode.RPCRDMAMsg), 0, 1, 1, key, 4096, 0, 0x1000, 0, 0)
	b = be32(b, xid, decode.RPCCall, 2, decode.NFSProgram, 4, decode.NFS4ProcCompound, 0, 0, 0, 0)
	return be32(b, 0, 1, 1, 22, 4, 0xAB) // tag "", minor 1, PUTFH fh(4)
}

func rpcReadReply(xid uint32) []byte {
	b := be32(nil, xid, 1, 32, uint32(decode.RPCRDMAMsg), 0, 0, 0)
	b = be32(b, xid, decode.RPCReply, 0, 0, 0, 0)
	return be32(b, 0, 0, 1, 22, 0) // NFS4_OK, tag "", PUTFH NFS4_OK
}

// TestRPCLinkerMemoryBounded runs 20000 RPCs, 8 in flight, one in 100
// never answered, through the linker with a connection bound of 64 calls
// waiting: what it holds stays bounded by the calls in flight (not the
// calls made), the calls never answered age into "never answered" as the
// bound evicts them or at the end, and the stats and findings are those
// of a linker that keeps every call.
func TestRPCLinkerMemoryBounded(t *testing.T) {
	defer flow.SetMaxRPCCalls(64)()
	const calls, depth = 20000, 8
	run := func(keep bool) (*flow.RPCLinker, []flow.Event, int) {
		var events []flow.Event
		w := flow.NewRPCWire(flow.Options{KeepULP: keep, OnEvent: func(e *flow.Event) {
			if e.Kind != decode.EventConnect {
				events = append(events, *e)
			}
		}})
		most := 0
		data := make([]byte, 1024)
		for i := 0; i < calls; i += depth {
			for j := range depth {
				xid := uint32(i + j + 1)
				w.Send(0, rpcReadCall(xid, 0x100+uint32(j)))
			}
			for j := range depth {
				xid := uint32(i + j + 1)
				if xid%100 == 0 {
					continue
				}
				w.Write(0x100+uint32(j), 0x1000, data)
				w.Send(1, rpcReadReply(xid))
			}
			if l, ok := w.Tr.ULPLinker(decode.ULPRPCRDMA).(*flow.RPCLinker); ok {
				most = max(most, flow.RPCRetained(l))
			}
		}
		w.Tr.Flush()
		l, _ := w.Tr.ULPLinker(decode.ULPRPCRDMA).(*flow.RPCLinker)
		return l, events, most
	}
	kept, keptEvents, _ := run(true)
	l, events, most := run(false)
	// 64 waiting, as many queued by age and indexed by handle, a batch
	if most > 3*64+3*depth {
		t.Errorf("the linker held %d entries for %d calls, want at most %d", most, calls, 3*64+3*depth)
	}
	if n := flow.RPCRetained(l); n > 3*64 {
		t.Errorf("%d entries held at the end", n)
	}
	st := l.Stats()
	if st.Calls != calls || st.Replied != calls-calls/100 || st.Unanswered != calls/100 || st.Errors+st.Orphans != 0 ||
		len(st.ByProc) != 1 || st.ByProc[0].Bytes != uint64(st.Replied)*1024 || st.ByProc[0].Latency.N != uint64(st.Replied) {
		t.Errorf("stats %+v", st)
	}
	noReply := 0
	for _, e := range events {
		if e.Kind == decode.EventULPNoCompletion {
			noReply++
		}
	}
	if noReply != calls/100 || len(events) != noReply {
		t.Errorf("%d events, %d never answered, want %d", len(events), noReply, calls/100)
	}
	if a, b := rpcStatsText(kept.Stats()), rpcStatsText(st); a != b || !slices.Equal(keptEvents, events) {
		t.Errorf("keeping every call: %s, forgetting: %s", a, b)
	}
	t.Logf("%d calls: at most %d entries held, %d kept when every call is", calls, most, flow.RPCRetained(kept))
}

// TestRPCForgetsOnRealMount: on the kernel's NFSv4.1 mount, the linker
// that forgets answered calls reports the stats and findings of the one
// that keeps them all, holds nothing at the end, and decodes every
// COMPOUND whole.
func TestRPCForgetsOnRealMount(t *testing.T) {
	const file = "../testdata/ulp/nfs_rdma_v41.pcap"
	run := func(keep bool) (*flow.RPCLinker, []flow.Event) {
		var events []flow.Event
		tr := trackFile(t, file, flow.Options{KeepULP: keep, OnEvent: func(e *flow.Event) { events = append(events, *e) }}, 0, nil)
		l, _ := tr.ULPLinker(decode.ULPRPCRDMA).(*flow.RPCLinker)
		return l, events
	}
	kept, ke := run(true)
	l, e := run(false)
	if a, b := rpcStatsText(kept.Stats()), rpcStatsText(l.Stats()); a != b || !slices.Equal(ke, e) || l.Stats().Calls != 35 {
		t.Errorf("keeping every call: %s %v\nforgetting: %s %v", a, ke, b, e)
	}
	if n := flow.RPCRetained(l); n != 0 {
		t.Errorf("%d entries held after every call was answered", n)
	}
	for _, ev := range e {
		if ev.Kind == decode.EventULPMalformed { // the READ replies' data is in write chunks
			t.Errorf("frame %d: %s", ev.Frame, ev.Text)
		}
	}
}
