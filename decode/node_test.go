package decode

import (
	"errors"
	"net/netip"
	"strings"
	"testing"
)

func TestParseNode(t *testing.T) {
	tests := []struct {
		in      string
		want    Node
		str     string // String; "" means in
		wantErr string
	}{
		{in: "lid:1", want: NodeLID(1)},
		{in: "lid:0x1", want: NodeLID(1), str: "lid:1"},
		{in: "LID:0XC001", want: NodeLID(0xc001), str: "lid:49153"},
		{in: "lid:65535", want: NodeLID(0xffff)},
		{in: "lid:010", want: NodeLID(10), str: "lid:10"}, // decimal, not octal
		{in: "10.77.0.2", want: NodeAddr(netip.MustParseAddr("10.77.0.2"))},
		{in: "fd77::2", want: NodeAddr(netip.MustParseAddr("fd77::2"))},
		{in: "fe80::2:c903:0:a", want: NodeAddr(netip.MustParseAddr("fe80::2:c903:0:a"))},
		{in: "::ffff:10.77.0.2", want: NodeAddr(netip.MustParseAddr("10.77.0.2")), str: "10.77.0.2"},
		{in: "::ffff:a4d:2", want: NodeAddr(netip.MustParseAddr("10.77.0.2")), str: "10.77.0.2"},
		{in: "lid:0", wantErr: `"lid:0" is not a LID: write a number from 1 to 65535`},
		{in: "lid:65536", wantErr: "is not a LID"},
		{in: "lid:", wantErr: "is not a LID"},
		{in: "lid:0x", wantErr: "is not a LID"},
		{in: "lid:-1", wantErr: "is not a LID"},
		{in: "lid:+1", wantErr: "is not a LID"},
		{in: "lid:1_0", wantErr: "is not a LID"},
		{in: "lid: 1", wantErr: "is not a LID"},
		{in: "", wantErr: `"" is not an IPv4 address, IPv6 address or GID without a zone, or a LID`},
		{in: "host-b", wantErr: `"host-b" is not an IPv4 address`},
		{in: "10.77.0", wantErr: "is not an IPv4 address"},
		{in: "1", wantErr: "is not an IPv4 address"},
		{in: "fe80::1%eth0", wantErr: `"fe80::1%eth0" has a zone: write the address without %eth0`},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseNode(tt.in)
			if tt.wantErr != "" {
				var ne *NodeError
				if err == nil || !errors.As(err, &ne) || ne.Input != tt.in || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("ParseNode(%q) = %v, %v; want error %q", tt.in, got, err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("ParseNode(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
			}
			str := tt.str
			if str == "" {
				str = tt.in
			}
			if got.String() != str {
				t.Errorf("String() = %q, want %q", got.String(), str)
			}
			// Round trip: what String writes reads back as the same node.
			if back, err := ParseNode(got.String()); err != nil || back != got {
				t.Errorf("ParseNode(%q) = %v, %v; want %v", got.String(), back, err, got)
			}
			var u Node
			if b, _ := got.MarshalText(); u.UnmarshalText(b) != nil || u != got {
				t.Errorf("text round trip of %v gives %v", got, u)
			}
		})
	}
}

func TestNodeBasics(t *testing.T) {
	var zero Node
	if zero.IsValid() || zero.String() != "invalid node" || string(zero.AppendTo(nil)) != "" {
		t.Errorf("zero Node: valid %v, %q", zero.IsValid(), zero.String())
	}
	if NodeAddr(netip.Addr{}) != zero {
		t.Error("NodeAddr of the zero Addr is not the zero Node")
	}
	var u Node = NodeLID(3)
	if err := u.UnmarshalText(nil); err != nil || u != zero {
		t.Errorf("UnmarshalText(\"\") = %v, %v", u, err)
	}
	l := NodeLID(7)
	if !l.IsValid() || !l.IsLID() || l.LID() != 7 || l.Addr().IsValid() {
		t.Errorf("NodeLID(7): %+v", l)
	}
	a := NodeAddr(netip.MustParseAddr("fe80::1%eth0"))
	if a.IsLID() || a.LID() != 0 || a.Addr() != netip.MustParseAddr("fe80::1") {
		t.Errorf("NodeAddr drops the zone: %+v", a)
	}
	if NodeAddr(netip.MustParseAddr("::ffff:1.2.3.4")) != NodeAddr(netip.MustParseAddr("1.2.3.4")) {
		t.Error("an IPv4-mapped address is not its IPv4 address")
	}
	// A LID is never an address, whatever the bytes.
	if NodeLID(1) == NodeAddr(netip.MustParseAddr("fffe::1")) || NodeLID(1) == NodeAddr(netip.MustParseAddr("0.0.0.1")) {
		t.Error("a LID equals an address")
	}
	order := []Node{{}, MustParseNode("10.0.0.1"), MustParseNode("10.0.0.2"), MustParseNode("fe80::1"), NodeLID(1), NodeLID(0xc000)}
	for i := range order {
		for j := range order {
			c := order[i].Compare(order[j])
			if (i < j) != (c < 0) || (i == j) != (c == 0) {
				t.Errorf("%v.Compare(%v) = %d", order[i], order[j], c)
			}
		}
	}
}

func TestMustParseNodePanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("MustParseNode(\"x\") did not panic")
		}
	}()
	MustParseNode("x")
}

func TestPacketNodes(t *testing.T) {
	var p Packet
	if _, _, ok := p.Nodes(); ok {
		t.Error("a packet without headers has nodes")
	}
	p.Has = HdrLRH
	p.LRH.SLID, p.LRH.DLID = 1, 2
	if s, d, ok := p.Nodes(); !ok || s != NodeLID(1) || d != NodeLID(2) {
		t.Errorf("LRH only: %v → %v (%v)", s, d, ok)
	}
	if _, _, ok := p.Addrs(); ok {
		t.Error("Addrs of an LRH-only packet")
	}
	p.Has |= HdrGRH
	p.GRH.SGID = netip.MustParseAddr("fe80::2:c903:0:a").As16()
	p.GRH.DGID = netip.MustParseAddr("::ffff:10.0.0.2").As16()
	if s, d, ok := p.Nodes(); !ok || s != MustParseNode("fe80::2:c903:0:a") || d != MustParseNode("10.0.0.2") {
		t.Errorf("GRH: %v → %v (%v)", s, d, ok)
	}
	if s, d, ok := p.Addrs(); !ok || s != netip.MustParseAddr("fe80::2:c903:0:a") || d != netip.MustParseAddr("10.0.0.2") {
		t.Errorf("GRH Addrs: %v → %v (%v)", s, d, ok)
	}
	p.Has = HdrIPv6
	p.IPv6.Src = netip.MustParseAddr("fd77::1").As16()
	p.IPv6.Dst = netip.MustParseAddr("::ffff:10.77.0.2").As16()
	if s, d, ok := p.Nodes(); !ok || s != MustParseNode("fd77::1") || d != MustParseNode("10.77.0.2") {
		t.Errorf("IPv6: %v → %v (%v)", s, d, ok)
	}
	p.Has = HdrIPv4 | HdrGRH | HdrLRH
	p.IPv4.Src, p.IPv4.Dst = [4]byte{10, 77, 0, 1}, [4]byte{10, 77, 0, 2}
	if s, d, ok := p.Nodes(); !ok || s != MustParseNode("10.77.0.1") || d != MustParseNode("10.77.0.2") {
		t.Errorf("IPv4: %v → %v (%v)", s, d, ok)
	}
	if a := testing.AllocsPerRun(100, func() { nodeSink, _, _ = p.Nodes() }); a != 0 {
		t.Errorf("Nodes allocates %.1f times", a)
	}
}

var nodeSink Node

// FuzzParseNode: ParseNode never panics, agrees with netip.ParseAddr on
// everything that is not "lid:...", and what it accepts round-trips
// through String.
func FuzzParseNode(f *testing.F) {
	for _, s := range []string{"lid:1", "lid:0x1", "LID:65535", "10.77.0.2", "fe80::2:c903:0:a", "::ffff:10.77.0.2", "fe80::1%eth0", "lid:", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := ParseNode(s)
		if len(s) < 4 || !strings.EqualFold(s[:4], "lid:") {
			a, aerr := netip.ParseAddr(s)
			if (aerr == nil && a.Zone() == "") != (err == nil) {
				t.Fatalf("ParseNode(%q) error %v, netip %v", s, err, aerr)
			}
			if err == nil && n != NodeAddr(a) {
				t.Fatalf("ParseNode(%q) = %v, netip %v", s, n, a)
			}
		}
		if err != nil {
			return
		}
		if back, err := ParseNode(n.String()); err != nil || back != n {
			t.Fatalf("%q → %v → %q → %v, %v", s, n, n.String(), back, err)
		}
	})
}
