package flow_test

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"slices"
	"testing"

	"github.com/rocetap/rocetap/decode"
	"github.com/rocetap/rocetap/flow"
)

// FuzzRPCLinker feeds the RPC-over-RDMA linker (through a tracker, the
// QPs decoded as rpcordma) records read from the fuzz input: a kind (0/1 a
// SEND from the client/server, 2 an RDMA WRITE Only from the server, 3 an
// RDMA READ request from the server, 4 a READ response Only from the
// client), a length byte and that many bytes (for WRITE and READ: rkey and
// VA first). It checks the linker never panics, every call it lists is
// sane, and its stats add up.
func FuzzRPCLinker(f *testing.F) {
	var seed []byte
	rec := func(kind byte, b []byte) {
		seed = append(append(seed, kind, byte(len(b))), b...)
	}
	be := func(v ...uint32) []byte {
		var b []byte
		for _, w := range v {
			b = binary.BigEndian.AppendUint32(b, w)
		}
		return b
	}
	// a call with a reply chunk (key 9 at 0x1000), the server's WRITE into
	// it, the RDMA_NOMSG reply; a call with a read chunk read by the server
	rec(0, append(be(7, 1, 32, 0, 0, 0, 1, 1, 9, 64, 0, 0x1000), be(7, 0, 2, 100003, 4, 0, 0, 0, 0, 0)...))
	rec(2, append(append(be(9, 0, 0x1000), be(7, 1, 0, 0, 0, 0)...), 0, 0, 0, 0))
	rec(1, be(7, 1, 32, 1, 0, 0, 1, 1, 9, 24, 0, 0x1000))
	rec(0, append(be(8, 1, 32, 0, 1, 0, 5, 100, 0, 0x2000, 0, 0, 0), be(8, 0, 2, 100003, 4, 1, 0, 0, 0, 0, 0, 1, 0)...))
	rec(3, be(5, 0, 0x2000))
	rec(4, make([]byte, 100))
	rec(1, append(be(8, 1, 32, 0, 0, 0, 0), be(8, 1, 0, 0, 0, 0, 0, 0, 0)...))
	f.Add(seed)
	// a long call: RDMA_NOMSG, the RPC call in the position-zero read
	// chunk (key 6 at 0x3000), the server's READ of it, the reply
	long := seed[:0:0]
	rec = func(kind byte, b []byte) { long = append(append(long, kind, byte(len(b))), b...) }
	call := be(9, 0, 2, 100003, 4, 1, 0, 0, 0, 0, 0, 1, 1, 10)
	rec(0, be(9, 1, 32, 2, 1, 0, 6, uint32(len(call)), 0, 0x3000, 0, 0, 0))
	rec(3, append(be(6, 0, 0x3000), make([]byte, len(call)-12)...))
	rec(4, call)
	rec(1, append(be(9, 1, 32, 0, 0, 0, 0), be(9, 1, 0, 0, 0, 0, 0, 0, 1, 10, 0, 0, 0)...))
	f.Add(long)
	f.Fuzz(func(t *testing.T, data []byte) {
		// once keeping every call, once forgetting those answered: the
		// stats and findings must not differ
		var events [2][]flow.Event
		var ls [2]*flow.RPCLinker
		for i, keep := range []bool{true, false} {
			w := flow.NewRPCWire(flow.Options{KeepULP: keep, OnEvent: func(e *flow.Event) { events[i] = append(events[i], *e) }})
			feedRPCRecords(w, data)
			w.Tr.Flush()
			ls[i], _ = w.Tr.ULPLinker(decode.ULPRPCRDMA).(*flow.RPCLinker)
		}
		l := ls[0]
		if l == nil {
			if bytes.Equal(data, seed) {
				t.Fatal("the seed reached no linker")
			}
			return
		}
		if st := l.Stats(); bytes.Equal(data, seed) && (st.Calls != 2 || st.Replied != 2 || st.Errors != 0 || st.ByProc[0].Bytes != 28 || st.ByProc[1].Bytes != 100) {
			t.Fatalf("the seed: %+v", st)
		}
		st := l.Stats()
		if st.Replied+st.Unanswered != st.Calls || st.Errors > st.Replied || st.Calls+st.Orphans != len(l.Calls()) {
			t.Fatalf("stats %+v over %d calls", st, len(l.Calls()))
		}
		if a, b := rpcStatsText(st), rpcStatsText(ls[1].Stats()); a != b || !slices.Equal(events[0], events[1]) {
			t.Fatalf("keeping every call: %s %v\nforgetting: %s %v", a, events[0], b, events[1])
		}
		if ls[1].Calls() != nil {
			t.Fatalf("%d calls kept without KeepULP", len(ls[1].Calls()))
		}
		for _, c := range l.Calls() {
			if c.ReplyFrame != 0 && c.CallFrame > c.ReplyFrame || len(c.DataFrames) > 0 && c.CallFrame == 0 {
				t.Fatalf("%+v", c)
			}
		}
	})
}

// feedRPCRecords feeds w the records of data (FuzzRPCLinker).
func feedRPCRecords(w *flow.RPCWire, data []byte) {
	for i := 0; i+2 <= len(data); {
		kind, ln := data[i]%5, int(data[i+1])
		i += 2
		b := data[i:min(i+ln, len(data))]
		i += len(b)
		var k [16]byte
		copy(k[:], b)
		rkey, va := binary.BigEndian.Uint32(k[:]), binary.BigEndian.Uint64(k[4:])
		switch kind {
		case 0, 1:
			w.Send(int(kind), b)
		case 2:
			w.Write(rkey, va, b[min(12, len(b)):])
		case 3:
			w.ReadRequest(rkey, va, uint32(len(b)))
		case 4:
			w.ReadResponse(b)
		}
	}
}

// rpcStatsText prints what RPCStats counts (not the latency samples'
// pointers) for comparisons.
func rpcStatsText(st *flow.RPCStats) string {
	s := fmt.Sprint(st.Calls, st.Replied, st.Errors, st.Unanswered, st.Orphans, st.ByOp, st.ByError)
	for _, p := range st.ByProc {
		s += fmt.Sprint(" ", p.Procedure, p.Ops, p.Count, p.Errors, p.Bytes, p.Latency.N, p.Latency.Min, p.Latency.Max, p.Latency.Quantile(0.5), p.Latency.Quantile(0.99))
	}
	return s
}
