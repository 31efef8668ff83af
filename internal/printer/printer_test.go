package printer

import (
	"strings"
	"testing"

	"github.com/rocetap/rocetap/decode"
)

func TestParseE(t *testing.T) {
	cases := []struct {
		opt     string
		check   func(FieldsOptions) bool
		wantErr string
	}{
		{"header=y", func(o FieldsOptions) bool { return o.Header }, ""},
		{"separator=/s", func(o FieldsOptions) bool { return o.Separator == ' ' }, ""},
		{"separator=,", func(o FieldsOptions) bool { return o.Separator == ',' }, ""},
		{"aggregator=;", func(o FieldsOptions) bool { return o.Aggregator == ';' }, ""},
		{"occurrence=l", func(o FieldsOptions) bool { return o.Occurrence == 'l' }, ""},
		{"quote=s", func(o FieldsOptions) bool { return o.Quote == '\'' }, ""},
		{"separator=ab", nil, "one character"},
		{"occurrence=x", nil, "f (first)"},
		{"color=y", nil, "unknown option"},
		{"header", nil, "name=value"},
	}
	for _, c := range cases {
		o := DefaultFieldsOptions()
		err := o.ParseE(c.opt)
		if c.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Errorf("-E %s: error %v, want %q", c.opt, err, c.wantErr)
			}
			continue
		}
		if err != nil || !c.check(o) {
			t.Errorf("-E %s: %v %+v", c.opt, err, o)
		}
	}
}

func TestJSONStringEscapes(t *testing.T) {
	got := string(appendJSONString(nil, "a\"b\\c\x1b[31m\x7f\xff"))
	want := `"a\"b\\c\u001b[31m\u007f\ufffd"`
	if got != want {
		t.Fatalf("%s, want %s", got, want)
	}
}

// TestSummaryOfEmptyPacket: a frame that decoded to nothing still prints
// a line and never panics.
func TestSummaryOfEmptyPacket(t *testing.T) {
	var p decode.Packet
	decode.Decode(&p, []byte{1, 2, 3}, decode.LinkTypeEthernet)
	line := string(AppendSummary(nil, &p))
	if !strings.Contains(line, "[truncated]") {
		t.Fatalf("%q", line)
	}
	_ = NewVerbose().Append(nil, &p)
	_ = AppendJSON(nil, &p, nil)
}

// TestMPTAnnotations: the summary's brackets for the MPT findings.
func TestMPTAnnotations(t *testing.T) {
	cases := []struct {
		name string
		an   decode.Analysis
		want string
	}{
		{"violation", decode.Analysis{Events: decode.EventMPTViolation, MPT: decode.MPTCheck{Checked: true, Finding: decode.MPTViolation,
			Why: "out of bounds by 256 bytes"}}, " [MPT: out of bounds by 256 bytes]"},
		{"accepted", decode.Analysis{Events: decode.EventMPTAccepted}, " [MPT: accepted a forbidden access]"},
		{"rejected", decode.Analysis{Events: decode.EventMPTRejected | decode.EventNAK}, " [MPT: NAKed an allowed access]"},
		{"checked ok", decode.Analysis{MPT: decode.MPTCheck{Checked: true, Allowed: true}}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.an.Tracked = true
			if got := string(appendAnalysis(nil, &c.an)); got != c.want {
				t.Errorf("%q, want %q", got, c.want)
			}
		})
	}
}
