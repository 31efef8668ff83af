package flow

import (
	"time"

	"github.com/rocetap/rocetap/decode"
)

// RPCWire feeds a tracker the packets of one RC connection decoded as
// RPC-over-RDMA (-d, destination QP 0x13, the server's): SENDs from either
// side, the server's RDMA WRITEs and READ requests, the client's READ
// responses, each SEND ACKed. The tests of the RPC linker (in flow_test
// too) build their traffic with it.
type RPCWire struct {
	Tr    *Tracker
	p     decode.Packet
	psn   [2]uint32
	n     int
	at    time.Time
	reads []uint32 // the server's READ requests not answered, by PSN
}

// RPCWireOptions returns o with the connection's QP decoded as rpcordma.
func RPCWireOptions(o Options) Options {
	o.DecodeAs = append(o.DecodeAs, DecodeAs{QP: 0x13, ULP: decode.ULPRPCRDMA})
	return o
}

// NewRPCWire returns a wire into a new tracker with options o
// (RPCWireOptions applied).
func NewRPCWire(o Options) *RPCWire {
	return &RPCWire{Tr: New(RPCWireOptions(o)), psn: [2]uint32{100, 500}, at: time.Unix(1700000000, 0)}
}

// Frame is the number of the last packet fed.
func (w *RPCWire) Frame() int { return w.n }

func (w *RPCWire) packet(side int, op uint8, psn uint32) *decode.Packet {
	hosts := [2][4]byte{{10, 0, 0, 1}, {10, 0, 0, 2}}
	qps := [2]uint32{0x12, 0x13} // the client's, the server's
	w.n++
	p := &w.p
	*p = decode.Packet{Frame: decode.Frame{Number: w.n, Time: w.at.Add(time.Duration(w.n) * time.Microsecond), Len: 100}}
	p.Has = decode.HdrEth | decode.HdrIPv4 | decode.HdrUDP | decode.HdrBTH
	p.Encap = decode.EncapRoCEv2
	p.IPv4.Src, p.IPv4.Dst = hosts[side], hosts[1-side]
	p.BTH = decode.BTH{Opcode: decode.TransportRC.Opcode(op), DestQP: qps[1-side], PSN: decode.PSN(psn)}
	for _, h := range p.BTH.Opcode.ExtHeaders() {
		p.Has |= h
	}
	return p
}

func (w *RPCWire) track(side int, payload []byte, ack bool) {
	if payload != nil {
		w.p.Payload = payload
		w.p.Has |= decode.HdrPayload
	}
	w.Tr.Track(&w.p)
	if ack {
		w.packet(1-side, decode.OpAcknowledge, w.psn[side]-1).AETH.Syndrome = 0x1F
		w.Tr.Track(&w.p)
	}
}

// Send sends msg as a SEND Only from side (0 the client, 1 the server).
func (w *RPCWire) Send(side int, msg []byte) {
	w.packet(side, decode.OpSendOnly, w.psn[side])
	w.psn[side]++
	w.track(side, msg, true)
}

// Write is the server's RDMA WRITE Only of b to rkey at va.
func (w *RPCWire) Write(rkey uint32, va uint64, b []byte) {
	p := w.packet(1, decode.OpWriteOnly, w.psn[1])
	w.psn[1]++
	p.RETH = decode.RETH{RKey: rkey, VA: va, DMALen: uint32(len(b))}
	w.track(1, b, true)
}

// ReadRequest is the server's RDMA READ request of n bytes at va of rkey.
func (w *RPCWire) ReadRequest(rkey uint32, va uint64, n uint32) {
	p := w.packet(1, decode.OpReadRequest, w.psn[1])
	w.reads = append(w.reads, w.psn[1])
	w.psn[1]++
	p.RETH = decode.RETH{RKey: rkey, VA: va, DMALen: n}
	w.track(1, nil, false)
}

// ReadResponse is the client's READ response Only answering the server's
// oldest READ request not answered (its last request when all are).
func (w *RPCWire) ReadResponse(b []byte) {
	psn := w.psn[1] - 1
	if len(w.reads) > 0 {
		psn, w.reads = w.reads[0], w.reads[1:]
	}
	w.packet(0, decode.OpReadResponseOnly, psn)
	w.track(0, b, false)
}

// RPCRetained counts what the RPC linker holds for its calls: calls kept
// (Options.KeepULP), waiting, queued by age or indexed by chunk handle.
func RPCRetained(l *RPCLinker) (n int) {
	n = len(l.calls)
	for _, c := range l.t.ULPConns() {
		if rc, ok := c.State.(*rpcConn); ok {
			n += len(rc.out) + len(rc.order) - rc.head + len(rc.keys)
		}
	}
	return n
}

// SetMaxRPCCalls sets the calls a connection keeps waiting, for a test;
// it returns a function restoring the bound.
func SetMaxRPCCalls(n int) (restore func()) {
	old := maxRPCCalls
	maxRPCCalls = n
	return func() { maxRPCCalls = old }
}
