package decode

import (
	"encoding/hex"
	"fmt"
	"strconv"
	"testing"
)

func TestAppendSanitized(t *testing.T) {
	cases := []struct{ in, want string }{
		{"plain", "plain"},
		{"\x1b[2Jboom", `\x1b[2Jboom`},
		{"a\nb\tc\x7f", `a\x0ab\x09c\x7f`},
		{"caf\xc3\xa9", "café"},
		{"bad\xff", `bad\xff`},
		{"\xc2\x9b31m", `\xc2\x9b31m`},               // C1 CSI
		{"\x1b]52;c;AAAA\x07", `\x1b]52;c;AAAA\x07`}, // OSC 52: a clipboard write
		{"file\u202etxt.exe", `file\u202etxt.exe`},   // RIGHT-TO-LEFT OVERRIDE
		{"\u2066a\u2069\u200f\u061c", `\u2066a\u2069\u200f\u061c`},
		{"line\u2028sep", `line\u2028sep`},
	}
	for _, c := range cases {
		if got := string(AppendSanitized(nil, c.in)); got != c.want {
			t.Errorf("AppendSanitized(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestAppendHexInt(t *testing.T) {
	cases := []struct {
		v     uint64
		width int
		want  string
	}{{0, 2, "0x00"}, {0x17, 6, "0x000017"}, {0x80010000, 16, "0x0000000080010000"}, {0xabc, 0, "0xabc"}}
	for _, c := range cases {
		if got := string(appendHexInt(nil, c.v, c.width)); got != c.want {
			t.Errorf("appendHexInt(%x, %d) = %s, want %s", c.v, c.width, got, c.want)
		}
	}
}

// TestAppendHex: every length around the four-byte steps, every byte
// value, against encoding/hex, appended after what dst held.
func TestAppendHex(t *testing.T) {
	all := make([]byte, 256)
	for i := range all {
		all[i] = byte(i)
	}
	for n := 0; n <= 256; n++ {
		if got, want := string(appendHex([]byte("x"), all[256-n:])), "x"+hex.EncodeToString(all[256-n:]); got != want {
			t.Fatalf("appendHex of %d bytes = %s, want %s", n, got, want)
		}
	}
}

// TestAppendDec: appendDec against strconv at every digit count and its
// edges.
func TestAppendDec(t *testing.T) {
	vs := []uint64{0, 1, 9, 10, 99, 100, 101, 999, 1000, 16777215, 1<<32 - 1, 1<<63 + 12345, 1<<64 - 1}
	for p := uint64(1); p < 1e19; p *= 10 {
		vs = append(vs, p-1, p, p+1, p*7+3)
	}
	for _, v := range vs {
		if got, want := string(appendDec([]byte("x"), v)), "x"+strconv.FormatUint(v, 10); got != want {
			t.Errorf("appendDec(%d) = %s, want %s", v, got, want)
		}
	}
}

func TestSuggest(t *testing.T) {
	for typo, want := range map[string]string{
		"infiniband.reth.rkey":    "infiniband.reth.r_key",
		"infiniband.bth.dqp":      "infiniband.bth.destqp",
		"infiniband.aeth.syndrom": "infiniband.aeth.syndrome",
		"ip.sr":                   "ip.src",
	} {
		if s := Suggest(typo, 3); len(s) == 0 || s[0] != want {
			t.Errorf("Suggest(%q) = %v, want %s first", typo, s, want)
		}
	}
}

func TestEditDistance(t *testing.T) {
	cases := []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"", "abc", 3}, {"abc", "", 3}, {"mtu", "mtu", 0},
		{"min_rnr_timr", "min_rnr_timer", 1},    // insertion
		{"rkey", "r_key", 1}, {"qpm", "qpn", 1}, // substitution
		{"kitten", "sitting", 3}, {"ab", "ba", 2}, // no transposition
	}
	for _, c := range cases {
		if got := EditDistance(c.a, c.b); got != c.want {
			t.Errorf("EditDistance(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
		if got := EditDistance(c.b, c.a); got != c.want {
			t.Errorf("EditDistance(%q, %q) = %d, want %d (symmetric)", c.b, c.a, got, c.want)
		}
	}
}

func TestOpcodeTable(t *testing.T) {
	cases := []struct {
		op   Opcode
		name string
		exts []Hdr
	}{
		{0x0B, "RC RDMA Write Only Immediate", []Hdr{HdrRETH, HdrImmDt}},
		{0x12, "RC Atomic Acknowledge", []Hdr{HdrAETH, HdrAtomicAckETH}},
		{0x17, "RC Send Only Invalidate", []Hdr{HdrIETH}},
		{0x1C, "RC Flush", []Hdr{HdrFETH, HdrRETH}},
		{0x1D, "RC Atomic Write", []Hdr{HdrRETH}},
		{0x2A, "UC RDMA Write Only", []Hdr{HdrRETH}},
		{0x4C, "RD RDMA Read Request", []Hdr{HdrRDETH, HdrDETH, HdrRETH}},
		{0x50, "RD RDMA Read Response Only", []Hdr{HdrRDETH, HdrAETH}},
		{0x55, "RD Resync", []Hdr{HdrRDETH, HdrDETH}},
		{0x65, "UD Send Only Immediate", []Hdr{HdrDETH, HdrImmDt}},
		{0x81, "CNP", []Hdr{HdrCNP}},
		{0xAA, "XRC RDMA Write Only", []Hdr{HdrXRCETH, HdrRETH}},
		{0xB1, "XRC Acknowledge", []Hdr{HdrAETH}},
		{0xB4, "XRC Fetch Add", []Hdr{HdrXRCETH, HdrAtomicETH}},
	}
	for _, c := range cases {
		if c.op.String() != c.name {
			t.Errorf("%#x: %q, want %q", uint8(c.op), c.op.String(), c.name)
		}
		got := c.op.ExtHeaders()
		if len(got) != len(c.exts) {
			t.Errorf("%#x: headers %v, want %v", uint8(c.op), got, c.exts)
			continue
		}
		for i := range got {
			if got[i] != c.exts[i] {
				t.Errorf("%#x: headers %v, want %v", uint8(c.op), got, c.exts)
			}
		}
	}
	for _, op := range []Opcode{0x18, 0x1A, 0x2C, 0x60, 0x66, 0x80, 0xE0, 0xFF} {
		if op.Known() {
			t.Errorf("%#x known", uint8(op))
		}
	}
}

// TestAppendHexIntWidths: appendHexInt against fmt's %#0*x at every width
// and digit count.
func TestAppendHexIntWidths(t *testing.T) {
	for _, v := range []uint64{0, 1, 0xf, 0x10, 0xabc, 0x12345, 0xffffff, 0x1000000, 0xdeadbeef, 1<<64 - 1, 0x0123456789abcdef} {
		for w := 0; w <= 16; w++ {
			want := "0x" + fmt.Sprintf("%0*x", max(w, 1), v)
			if got := string(appendHexInt([]byte("y"), v, w)); got != "y"+want {
				t.Errorf("appendHexInt(%#x, %d) = %s, want y%s", v, w, got, want)
			}
		}
	}
}
