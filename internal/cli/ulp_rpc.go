package cli

import (
	"github.com/rocetap/rocetap/decode"
	"github.com/rocetap/rocetap/flow"
)

// rpcStats returns the RPC-over-RDMA summary of the capture, nil when it
// has no NFS-over-RDMA connection.
func (an *analysis) rpcStats() *flow.RPCStats {
	if l, ok := an.tracker.ULPLinker(decode.ULPRPCRDMA).(*flow.RPCLinker); ok {
		return l.Stats()
	}
	return nil
}
