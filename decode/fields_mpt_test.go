package decode

import (
	"strings"
	"testing"
)

// TestMPTFields: the rocetap.mpt.* fields of a checked request, of a
// response, and their absence without a check or without a tracker.
func TestMPTFields(t *testing.T) {
	req := MPTCheck{Checked: true, Op: MPTOpWrite, Verdict: 10, VerdictName: "out_of_bounds", RKey: 0x22e2, HasMR: true, MR: 0x22e2,
		HasRange: true, Base: 0x5000, Size: 4096, HasOffset: true, Offset: 3840, HasPA: true, PA: 0x44bf2c8f00, Over: 256,
		Finding: MPTViolation, Why: "out of bounds by 256 bytes"}
	cases := []struct {
		name    string
		tracked bool
		mpt     MPTCheck
		want    string // abbrev=value, in registry order, for the fields present
	}{
		{"request", true, req, "checked=1 op=write verdict=out_of_bounds violation=1 rkey=0x000022e2 mr=0x000022e2 window=0 " +
			"mr_va=0x0000000000005000 mr_len=4096 offset=3840 pa=0x00000044bf2c8f00 over=256 finding=violation"},
		{"cache hit in a window", true, MPTCheck{Checked: true, Allowed: true, Op: MPTOpRead, Verdict: 1, VerdictName: "ok", RKey: 0x0800019c,
			Window: true, HasMR: true, MR: 0x1563, HasRange: true, Size: 4096, HasPA: true, HasCache: true, CacheHit: true},
			"checked=1 op=read verdict=ok rkey=0x0800019c mr=0x00001563 window=1 mr_va=0x0000000000000000 mr_len=4096 pa=0x0000000000000000 cache_hit=1"},
		{"response", true, MPTCheck{Finding: MPTAccepted}, "finding=accepted"},
		{"not checked", true, MPTCheck{}, ""},
		{"not tracked", false, req, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var p Packet
			p.Analysis.Tracked = c.tracked
			p.Analysis.MPT = c.mpt
			var got []string
			for _, f := range Fields() {
				if !strings.HasPrefix(f.Abbrev, "rocetap.mpt.") {
					continue
				}
				if !f.Stateful {
					t.Errorf("%s is not Stateful", f.Abbrev)
				}
				for _, v := range f.Values(&p, nil) {
					got = append(got, strings.TrimPrefix(f.Abbrev, "rocetap.mpt.")+"="+string(f.AppendValue(nil, v)))
				}
				if f.HasUint() {
					if u, ok := f.Uint(&p); ok != f.Present(&p) {
						t.Errorf("%s: Uint ok %v (%d), Present %v", f.Abbrev, ok, u, f.Present(&p))
					}
				}
			}
			if s := strings.Join(got, " "); s != c.want {
				t.Errorf("\n got %s\nwant %s", s, c.want)
			}
		})
	}
	for _, name := range []string{"mpt_violation", "mpt_accepted", "mpt_rejected"} {
		if f := FieldByName("rocetap.analysis." + name); f == nil || !f.Stateful {
			t.Errorf("rocetap.analysis.%s: %v", name, f)
		}
	}
}
