package filter

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rocetap/rocetap/decode"
	"github.com/rocetap/rocetap/internal/testcap"
)

// packets decodes a capture of testdata into Packets.
func packets(t testing.TB, name string) []*decode.Packet {
	t.Helper()
	var out []*decode.Packet
	for _, fr := range testcap.ReadPcap(t, filepath.Join("../../testdata", name)) {
		p := &decode.Packet{}
		p.Frame.Number, p.Frame.Len = fr.Number, fr.Len
		decode.Decode(p, fr.Data, fr.LinkType)
		out = append(out, p)
	}
	return out
}

func selected(t *testing.T, f *Filter, pkts []*decode.Packet) []int {
	var out []int
	for _, p := range pkts {
		if f.Match(p) {
			out = append(out, p.Frame.Number)
		}
	}
	return out
}

func TestMatch(t *testing.T) {
	// read_atomic: 1,3,5,7 READ requests (PSN 768..771, lengths 0 8 1024
	// 3000); 2,4,6 READ response Only; 8,9,10 First/Middle/Last; 11
	// FetchAdd; 13,15 CmpSwap; 12,14,16 ATOMIC ACK (orig 0, 5, 0x1122...).
	ra := packets(t, "rxe/read_atomic.pcap")
	// ipv6_mix: fd77::1 <-> fd77::2.
	v6 := packets(t, "rxe/ipv6_mix.pcap")
	cases := []struct {
		pkts []*decode.Packet
		expr string
		want []int
	}{
		{ra, "infiniband.bth.opcode == 12", []int{1, 3, 5, 7}},
		{ra, "infiniband.bth.opcode eq 0xc", []int{1, 3, 5, 7}},
		{ra, "infiniband.bth.opcode == 014", []int{1, 3, 5, 7}},
		{ra, "infiniband.reth", []int{1, 3, 5, 7}},                   // the header itself: READ requests only
		{ra, "infiniband.reth.r_key", []int{1, 3, 5, 7, 11, 13, 15}}, // Wireshark shows the AtomicETH rkey under this name too
		{ra, "infiniband.reth.dmalen >= 1024", []int{5, 7}},
		{ra, "infiniband.reth.dmalen gt 8 and infiniband.reth.dmalen lt 3000", []int{5}},
		{ra, "infiniband.bth.opcode in {13..16}", []int{2, 4, 6, 8, 9, 10}},
		{ra, "infiniband.bth.opcode in {19, 20}", []int{11, 13, 15}},
		{ra, "infiniband.atomicacketh.origremdt == 0x1122334455667788", []int{16}},
		{ra, "infiniband.aeth.syndrome & 0x60 == 0", []int{2, 4, 6, 8, 10, 12, 14, 16}},
		{ra, "infiniband.bth.opcode & 0x10", []int{2, 4, 6, 11, 12, 13, 14, 15, 16}},
		{ra, "not infiniband.aeth and infiniband.bth.psn <= 770", []int{1, 3, 5}},
		{ra, "!(infiniband.bth.psn != 771)", []int{7, 8}},
		{ra, "frame.number == 1 or frame.number == 2 and frame.number == 3", []int{1}},
		{ra, "frame.number == 1 xor infiniband.bth.opcode == 12", []int{3, 5, 7}},
		{ra, "ip.src == 10.77.0.2 && infiniband.bth.opcode == 16", []int{2, 4, 6}},
		{ra, "ip.addr == 10.77.0.0/24", []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}},
		{ra, "ip.addr != 10.77.0.2", nil},
		{ra, "ip.addr ~= 10.77.0.2", []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}},
		{ra, "eth.src == 02:00:0a:4d:00:02 and frame.number < 5", []int{2, 4}},
		{ra, "eth.addr == 0200.0a4d.0001 and frame.number < 3", []int{1, 2}},
		{ra, "udp.port == 4791 and frame.number == 1", []int{1}},
		{ra, "data.data[0:2] == 00:00 and frame.number == 4", nil},
		{ra, `rocetap.opcode == "RC Fetch Add"`, []int{11}},
		{ra, `rocetap.opcode contains "Compare"`, []int{13, 15}},
		{ra, `rocetap.opcode matches "^rc (fetch|compare)"`, []int{11, 13, 15}},
		{ra, `rocetap.icrc.status == "good" and frame.number < 3`, []int{1, 2}},
		{v6, "ipv6.addr == fd77::1 and frame.number <= 2", []int{1, 2}},
		{v6, "ipv6.src == fd77::/16 and frame.number == 1", []int{1}},
		{v6, "ipv6.src == fe80::/10", nil},
		{ra, "ip.src == ip.dst", nil},
		{ra, "frame.len > ip.len and frame.number < 3", []int{1, 2}},
		{v6, "infiniband.bth[0] == 0x0a", []int{1, 18}},
		{ra, `rocetap.opcode ~ "fetch"`, []int{11}},
		// ipv6_mix values below checked with tshark -Y on the same file.
		{v6, "infiniband.aeth.syndrome == 0x62", []int{19}},
		{v6, "infiniband.immdt", []int{7, 21}},
		{v6, "infiniband.bth[0] == 0a", []int{1, 18}},
		{v6, "infiniband.bth[-3:] == 00:00:00", nil},
		{v6, `data.data contains "aaaa" and frame.number < 3`, []int{1}},
		{v6, `data.data contains 61:61:61`, []int{1, 3, 4, 5, 7, 9, 10, 11, 14, 15, 18}},
	}
	for _, c := range cases {
		f, err := Compile(c.expr)
		if err != nil {
			t.Errorf("%s: %v", c.expr, err)
			continue
		}
		got := selected(t, f, c.pkts)
		if !equal(got, c.want) {
			t.Errorf("%s: selected %v, want %v", c.expr, got, c.want)
		}
	}
}

func equal(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestErrors(t *testing.T) {
	cases := []struct {
		expr    string
		pos     int
		msg     string
		suggest string
	}{
		{"infiniband.reth.rkey == 5", 0, "unknown field", "infiniband.reth.r_key"},
		{"ip.src == 10.77.0", 10, "not an IPv4 address", ""},
		{"infiniband.bth.opcode == 256", 25, "does not fit", ""},
		{"infiniband.bth.opcode ==", 24, "a value was expected", ""},
		{"(infiniband.bth.psn == 3", 24, "never closed", ""},
		{"infiniband.bth.psn == 3)", 23, "unexpected", ""},
		{"infiniband.bth.psn == 3 4", 24, "unexpected", ""},
		{"eth.src == 01:02:03", 11, "a MAC address has 6", ""},
		{"infiniband.bth.opcode in {3 1..0}", 28, "empty", ""},
		{`rocetap.opcode matches "(unclosed"`, 23, "regular expression", ""},
		{"ip.src contains 1", 7, "contains needs", ""},
		{"infiniband.bth.psn[0:2] == 00:01", 18, "only byte and string fields", ""},
		{"", 0, "empty filter", ""},
		{`rocetap.opcode == "abc`, 18, "unterminated", ""},
		{"and", 0, "operator", ""},
		{"5 == infiniband.bth.psn", 0, "put the field on the left", ""},
		{"ip.src == eth.dst", 10, "cannot be compared", ""},
	}
	for _, c := range cases {
		_, err := Compile(c.expr)
		var se *SyntaxError
		if !errors.As(err, &se) {
			t.Errorf("%q: error %v, want a SyntaxError", c.expr, err)
			continue
		}
		if se.Pos != c.pos || !strings.Contains(se.Msg, c.msg) || c.suggest != "" && (len(se.Suggest) == 0 || se.Suggest[0] != c.suggest) {
			t.Errorf("%q: pos %d msg %q suggest %v; want pos %d, %q, %q", c.expr, se.Pos, se.Msg, se.Suggest, c.pos, c.msg, c.suggest)
		}
		if !strings.Contains(se.Error(), "^") {
			t.Errorf("%q: no caret in %q", c.expr, se.Error())
		}
	}
}

func TestCanonicalRoundTrip(t *testing.T) {
	for _, e := range []string{
		"infiniband.bth.opcode in {6..11 17} and ip.addr == 10.77.0.0/16 or not infiniband.reth",
		"infiniband.aeth.syndrome & 0x60 == 0x60",
		`data.data[1:2] == 0a:0b and rocetap.opcode matches "send"`,
		"eth.src == 02:00:0a:4d:00:01 xor ipv6.addr == fd77::/16",
	} {
		f := MustCompile(e)
		g, err := Compile(f.String())
		if err != nil {
			t.Fatalf("%q -> %q: %v", e, f.String(), err)
		}
		if g.String() != f.String() {
			t.Fatalf("canonical form not stable: %q -> %q", f.String(), g.String())
		}
	}
}

// FuzzCompile: no input panics, and every error carries a position inside
// the expression.
func FuzzCompile(f *testing.F) {
	for _, s := range []string{"infiniband.bth.opcode == 4", "ip.addr == 10.0.0.0/8 and not udp", "data.data[0:4] contains 01:02",
		`rocetap.opcode matches "^RC"`, "infiniband.bth.opcode in {1 2..5}", "(a", "\"", "x[", "eth.src == ff:ff:ff:ff:ff:ff"} {
		f.Add(s)
	}
	pkts := packets(f, "rxe/ipv6_mix.pcap")
	f.Fuzz(func(t *testing.T, expr string) {
		flt, err := Compile(expr)
		if err != nil {
			var se *SyntaxError
			if !errors.As(err, &se) || se.Pos < 0 || se.Pos > len(expr) {
				t.Fatalf("%q: error %v without a valid position", expr, err)
			}
			_ = se.Error()
			return
		}
		for _, p := range pkts {
			flt.Match(p)
		}
		_ = flt.String()
	})
}

var benchExprs = map[string]string{
	"1clause":  "infiniband.bth.opcode == 17",
	"3clauses": "infiniband.bth.opcode in {6..11} and infiniband.bth.destqp == 0x000023 and infiniband.bth.psn > 100",
	"8clauses": "infiniband.bth.opcode in {6..11} and infiniband.bth.destqp == 0x000023 and infiniband.bth.psn > 100 and " +
		"infiniband.bth.a and udp.dstport == 4791 and not infiniband.aeth and ip.dsfield.ecn != 3 and infiniband.bth.p_key == 65535",
	// Every clause true on every RoCE packet: nothing short-circuits.
	"3clauses-all": "infiniband.bth.p_key == 65535 and udp.dstport == 4791 and infiniband.bth.tver == 0",
	"8clauses-all": "infiniband.bth.p_key == 65535 and udp.dstport == 4791 and infiniband.bth.tver == 0 and infiniband.bth.psn >= 0 and " +
		"infiniband.bth.destqp != 0 and infiniband.bth.opcode in {0..255} and ip.dsfield.ecn != 3 and eth.type == 0x0800",
}

func TestMatchDoesNotAllocate(t *testing.T) {
	pkts := packets(t, "rxe/ipv6_mix.pcap")
	pkts = append(pkts, packets(t, "rxe/read_atomic.pcap")...)
	for name, e := range benchExprs {
		f := MustCompile(e)
		extras := []string{"", " or ip.addr == 10.77.0.1", ` or data.data contains 61:61`, ` or rocetap.opcode matches "x"`}
		if raceEnabled {
			extras = extras[:3] // see race_test.go
		}
		for _, extra := range extras {
			g := MustCompile("(" + f.Expr() + ")" + extra)
			n := testing.AllocsPerRun(50, func() {
				for _, p := range pkts {
					g.Match(p)
				}
			})
			if n != 0 {
				t.Errorf("%s%s: %v allocations", name, extra, n)
			}
		}
	}
}

func BenchmarkMatch(b *testing.B) {
	var pkts []*decode.Packet
	for _, c := range []string{"rxe/pt_write.pcap", "rxe/pt_read.pcap", "rxe/pt_send.pcap", "rxe/ipv6_mix.pcap", "rxe/cm_rping.pcap"} {
		pkts = append(pkts, packets(b, c)...)
	}
	// In rocetap the filter runs on the Packet a worker has just decoded,
	// which is in the CPU cache. "hot" mirrors that with 16 packets of
	// every kind (16 x 2 KiB fits L1); "cold" cycles through all of them.
	var hot []*decode.Packet
	for i := 0; i < len(pkts) && len(hot) < 16; i += len(pkts) / 16 {
		hot = append(hot, pkts[i])
	}
	sets := map[string][]*decode.Packet{"hot": hot, "cold": pkts}
	for _, name := range []string{"1clause", "3clauses", "8clauses", "3clauses-all", "8clauses-all"} {
		f := MustCompile(benchExprs[name])
		for _, set := range []string{"hot", "cold"} {
			pkts := sets[set]
			b.Run(name+"/"+set, func(b *testing.B) {
				b.ReportAllocs()
				n := 0
				for i := 0; i < b.N; i++ {
					if f.Match(pkts[i%len(pkts)]) {
						n++
					}
				}
				sink = n
			})
		}
	}
}

var sink int
