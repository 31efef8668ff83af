package mpt

import (
	"github.com/rocetap/rocetap/decode"
	"github.com/rocetap/rocetap/hca"
)

// Synthetic returns an MPT file of n MRs, as a large application
// registers them, for the tests and benchmarks of loading one: responder
// 10.77.0.2 with one PD and one RC QP (0x11, peer 10.77.0.1 QP 0x12), and
// MRs of 4 KiB to 256 KiB with rkeys (and lkeys) from 0x10000000 up, 1 MiB
// apart from 0x7f0000000000.
func Synthetic(n int) *File {
	resp, _ := decode.ParseNode("10.77.0.2")
	peer, _ := decode.ParseNode("10.77.0.1")
	f := &File{Version: 1, Profile: "rxe", Config: hca.Config{
		Responder: resp,
		PDs:       []hca.PDConfig{{ID: 1}},
		QPs: []hca.QPConfig{{QPN: 0x11, PD: 1, Type: decode.TransportRC, Access: hca.RemoteRead | hca.RemoteWrite,
			MTU: 1024, Remote: &hca.Peer{Addr: peer, QPN: 0x12}}},
		MRs: make([]hca.MRConfig, n),
	}}
	lens := []uint64{4096, 8192, 65536, 262144}
	for i := range f.MRs {
		k := uint32(0x10000000 + i)
		f.MRs[i] = hca.MRConfig{RKey: k, LKey: k, VA: 0x7f0000000000 + uint64(i)<<20, Length: lens[i%4], PD: 1,
			Access: hca.LocalWrite | hca.RemoteWrite | hca.RemoteRead}
	}
	return f
}
