package printer

import (
	"testing"

	"github.com/rocetap/rocetap/decode"
)

// TestAppendInfoULP: the Info made with the ULP text kept (ULPText) is the
// Info AppendInfo makes from the analysis, the ULP part before the flags
// and the analysis in brackets; without a text it is the Info without ULP.
func TestAppendInfoULP(t *testing.T) {
	for _, c := range []struct {
		name  string
		flags decode.Flag
		ev    decode.Event
	}{
		{"plain", 0, 0},
		{"flags", decode.FlagICRCBad, 0},
		{"flags and analysis", decode.FlagICRCBad | decode.FlagMalformed, decode.EventRetransmission},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := &decode.Packet{Has: decode.HdrBTH, Flags: c.flags}
			p.BTH.Opcode, p.BTH.DestQP, p.BTH.PSN = decode.OpSendOnly, 0x13, 7
			p.Analysis.Tracked, p.Analysis.Session, p.Analysis.Events = true, 1, c.ev
			u := &decode.ULPInfo{Proto: decode.ULPNVMe}
			u.NVMe.Kind, u.NVMe.CQE = decode.NVMeCQE, decode.NVMeCompletion{CID: 5}
			p.Analysis.ULP = u
			want := string(AppendInfo(nil, p))
			text := string(AppendULPText(nil, p))
			if text != "NVMe CQE cid=5 Successful Completion" {
				t.Fatalf("AppendULPText %q", text)
			}
			p.Analysis.ULP = nil
			without := string(AppendInfo(nil, p))
			if got := string(AppendInfoULP([]byte("x"), p, text)); got != "x"+want {
				t.Errorf("AppendInfoULP %q, AppendInfo %q", got, want)
			}
			if got := string(AppendInfoULP(nil, p, "")); got != without {
				t.Errorf("without a text: %q, want %q", got, without)
			}
		})
	}
}
