package printer

import (
	"testing"

	"github.com/rocetap/rocetap/decode"
	"github.com/rocetap/rocetap/flow"
	"github.com/rocetap/rocetap/internal/testcap"
)

// TestInfoNoAllocs: on tracked packets of real and synthetic captures (RC
// WRITE and READ, NVMe-oF capsules and their data, NFS over RDMA, iSER,
// SMB Direct), AppendInfo, AppendULPText and AppendInfoULP append into a
// buffer that has room without allocating, and AppendInfoULP with the
// text AppendULPText made is AppendInfo.
func TestInfoNoAllocs(t *testing.T) {
	var buf, text, want []byte
	seen := map[decode.ULP]int{}
	for _, path := range []string{
		"../../testdata/synth/rc_all_opcodes.pcap",
		"../../testdata/ulp/nvmeof_io.pcap",
		"../../testdata/ulp/nfs_rdma_v41.pcap",
		"../../testdata/synth/iser_smb_direct.pcap",
	} {
		eachTracked(testcap.ReadFile(t, path), flow.Options{}, func(fr testcap.Frame, p *decode.Packet) {
			buf = AppendInfo(buf[:0], p)
			want = append(want[:0], buf...)
			text = AppendULPText(text[:0], p)
			u := p.Analysis.ULP
			if u != nil {
				seen[u.Proto]++
			}
			if n := testing.AllocsPerRun(5, func() { buf = AppendInfo(buf[:0], p) }); n != 0 {
				t.Errorf("%s frame %d: AppendInfo allocates %v times (%s)", path, fr.Number, n, want)
			}
			if n := testing.AllocsPerRun(5, func() { text = AppendULPText(text[:0], p) }); n != 0 {
				t.Errorf("%s frame %d: AppendULPText allocates %v times (%s)", path, fr.Number, n, text)
			}
			s := string(text)
			p.Analysis.ULP = nil
			if n := testing.AllocsPerRun(5, func() { buf = AppendInfoULP(buf[:0], p, s) }); n != 0 {
				t.Errorf("%s frame %d: AppendInfoULP allocates %v times (%s)", path, fr.Number, n, want)
			}
			if string(buf) != string(want) {
				t.Errorf("%s frame %d: AppendInfoULP %q, AppendInfo %q", path, fr.Number, buf, want)
			}
			p.Analysis.ULP = u
		})
	}
	for _, proto := range []decode.ULP{decode.ULPNVMe, decode.ULPRPCRDMA, decode.ULPISER, decode.ULPSMBDirect} {
		if seen[proto] == 0 {
			t.Errorf("no packet of %v: the test checks nothing of it", proto)
		}
	}
}
