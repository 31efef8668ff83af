package decode_test

import (
	"testing"

	"github.com/rocetap/rocetap/decode"
)

// TestLinkSpeedExtNames: the value names of the extended link speeds are
// those libibmad's mad_dump_linkspeedext* print (rdma-core 44), but for
// LinkSpeedExtEnabled's commands 0, 30 and 31 (IBA 1.3 14.2.5.6), which
// it prints as numbers.
func TestLinkSpeedExtNames(t *testing.T) {
	for _, c := range []struct {
		field string
		v     uint64
		want  string
	}{
		{"rocetap.portinfo.linkspeedextactive", 0, "No Extended Speed"},
		{"rocetap.portinfo.linkspeedextactive", 1, "14.0625 Gbps"},
		{"rocetap.portinfo.linkspeedextactive", 2, "25.78125 Gbps"},
		{"rocetap.portinfo.linkspeedextactive", 4, "53.125 Gbps"},
		{"rocetap.portinfo.linkspeedextactive", 8, "106.25 Gbps"},
		{"rocetap.portinfo.linkspeedextactive", 3, ""}, // one speed is active, never two
		{"rocetap.portinfo.linkspeedextsupported", 3, "14.0625 Gbps or 25.78125 Gbps"},
		{"rocetap.portinfo.linkspeedextsupported", 12, "53.125 Gbps or 106.25 Gbps"},
		{"rocetap.portinfo.linkspeedextsupported", 15, "14.0625 Gbps or 25.78125 Gbps or 53.125 Gbps or 106.25 Gbps"},
		{"rocetap.portinfo.linkspeedextenabled", 5, "14.0625 Gbps or 53.125 Gbps"},
		{"rocetap.portinfo.linkspeedextenabled", 16, ""},
		{"rocetap.portinfo.linkspeedextenabled", 0, "No State Change"},
		{"rocetap.portinfo.linkspeedextenabled", 30, "Disable extended link speeds"},
		{"rocetap.portinfo.linkspeedextenabled", 31, "Set to LinkSpeedExtSupported"},
	} {
		f := decode.FieldByName(c.field)
		if f == nil {
			t.Fatalf("no field %s", c.field)
		}
		if got := f.ValueName(c.v); got != c.want {
			t.Errorf("%s %d: %q, want %q", c.field, c.v, got, c.want)
		}
	}
}
