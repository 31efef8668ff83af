package capture_test

import (
	"encoding/binary"
	"errors"
	"io"
	"path/filepath"
	"testing"

	"golang.org/x/net/bpf"

	"github.com/rocetap/rocetap/capture"
	"github.com/rocetap/rocetap/decode"
)

// wantRoCE is the filter's job as the decoder sees the frame: RoCEv2 to
// UDP port 4791 or RoCEv1, untagged or behind one tag, and with pfc MAC
// control frames.
func wantRoCE(p *decode.Packet, pfc bool) bool {
	if p.NumVLAN > 1 {
		return false
	}
	switch {
	case p.Encap == decode.EncapRoCEv2:
		return p.Has&decode.HdrUDP != 0 && p.UDP.DstPort == 4791
	case p.Encap == decode.EncapRoCEv1:
		return true
	case p.Has&(decode.HdrPFC|decode.HdrPause) != 0:
		return pfc
	}
	return false
}

func newVM(t *testing.T, pfc bool) *bpf.VM {
	t.Helper()
	raw, err := capture.RoCEFilter(pfc)
	if err != nil {
		t.Fatal(err)
	}
	ins, ok := bpf.Disassemble(raw)
	if !ok {
		t.Fatal("the filter does not disassemble")
	}
	vm, err := bpf.NewVM(ins)
	if err != nil {
		t.Fatalf("the kernel's checks (as x/net/bpf makes them) refuse the filter: %v", err)
	}
	return vm
}

// TestRoCEFilterCaptures runs the built-in filter (in x/net/bpf's VM,
// which runs classic BPF as the kernel does) over every Ethernet frame of
// the real and synthetic captures in testdata and compares its verdict
// with the decoder's.
func TestRoCEFilterCaptures(t *testing.T) {
	files, _ := filepath.Glob("../testdata/rxe/*.pcap")
	synth, _ := filepath.Glob("../testdata/synth/*.pcap*")
	files = append(files, synth...)
	for _, pfc := range []bool{false, true} {
		vm := newVM(t, pfc)
		var kept, dropped int
		for _, f := range files {
			r, err := capture.Open(f)
			if err != nil {
				t.Fatal(err)
			}
			var p decode.Packet
			for n := 1; ; n++ {
				data, info, err := r.Next()
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					t.Fatalf("%s: %v", f, err)
				}
				if info.LinkType != decode.LinkTypeEthernet {
					continue
				}
				p.Frame = decode.Frame{Number: n, Len: info.Length}
				decode.Decode(&p, data, info.LinkType)
				if p.Flags&decode.FlagTruncated != 0 {
					continue
				}
				got, err := vm.Run(data)
				if err != nil {
					t.Fatalf("%s frame %d: %v", f, n, err)
				}
				if want := wantRoCE(&p, pfc); (got != 0) != want {
					t.Errorf("pfc %v: %s frame %d (%s, %d VLAN tags): filter keeps %d bytes, want kept=%v", pfc, filepath.Base(f), n, p.Encap, p.NumVLAN, got, want)
				}
				if got != 0 {
					kept++
					if got < len(data) {
						t.Errorf("%s frame %d: filter keeps %d of %d bytes", f, n, got, len(data))
					}
				} else {
					dropped++
				}
			}
			r.Close()
		}
		if kept < 500 {
			t.Errorf("pfc %v: the filter kept only %d frames", pfc, kept)
		}
		t.Logf("pfc %v: %d frames kept, %d dropped", pfc, kept, dropped)
	}
}

// frame builds an Ethernet frame: ethertype, then body.
func frame(etherType uint16, body ...[]byte) []byte {
	b := make([]byte, 14, 128)
	binary.BigEndian.PutUint16(b[12:], etherType)
	for _, x := range body {
		b = append(b, x...)
	}
	return append(b, make([]byte, 32)...) // BTH-sized tail
}

func ipv4(proto byte, fragOff uint16, ihl int) []byte {
	h := make([]byte, ihl*4)
	h[0] = 0x40 | byte(ihl)
	binary.BigEndian.PutUint16(h[6:], fragOff)
	h[8], h[9] = 64, proto
	return h
}

func udp(dport uint16) []byte {
	h := make([]byte, 8)
	binary.BigEndian.PutUint16(h[0:], 49152)
	binary.BigEndian.PutUint16(h[2:], dport)
	return h
}

func ipv6(next byte) []byte {
	h := make([]byte, 40)
	h[0], h[6] = 0x60, next
	return h
}

func vlan(etherType uint16) []byte {
	h := make([]byte, 4)
	binary.BigEndian.PutUint16(h[2:], etherType)
	return h
}

// TestRoCEFilterFrames: what the captures do not hold.
func TestRoCEFilterFrames(t *testing.T) {
	tests := []struct {
		name string
		b    []byte
		want bool
	}{
		{"IPv4 UDP 4791", frame(0x0800, ipv4(17, 0, 5), udp(4791)), true},
		{"IPv4 with options, UDP 4791", frame(0x0800, ipv4(17, 0, 7), udp(4791)), true},
		{"IPv4 first fragment (more fragments set), UDP 4791", frame(0x0800, ipv4(17, 0x2000, 5), udp(4791)), true},
		{"IPv4 later fragment", frame(0x0800, ipv4(17, 0x0010, 5), udp(4791)), false},
		{"IPv4 UDP 53", frame(0x0800, ipv4(17, 0, 5), udp(53)), false},
		{"IPv4 UDP from 4791 to 53", frame(0x0800, ipv4(17, 0, 5), []byte{0x12, 0xb7, 0, 53, 0, 8, 0, 0}), false},
		{"IPv4 TCP to 4791", frame(0x0800, ipv4(6, 0, 5), udp(4791)), false},
		{"IPv6 UDP 4791", frame(0x86dd, ipv6(17), udp(4791)), true},
		{"IPv6 TCP", frame(0x86dd, ipv6(6), udp(4791)), false},
		{"IPv6 hop-by-hop then UDP 4791 (not followed)", frame(0x86dd, ipv6(0), []byte{17, 0, 0, 0, 0, 0, 0, 0}, udp(4791)), false},
		{"802.1Q IPv4 UDP 4791", frame(0x8100, vlan(0x0800), ipv4(17, 0, 5), udp(4791)), true},
		{"802.1ad IPv6 UDP 4791", frame(0x88a8, vlan(0x86dd), ipv6(17), udp(4791)), true},
		{"802.1Q RoCEv1", frame(0x8100, vlan(0x8915)), true},
		{"two tags", frame(0x88a8, vlan(0x8100), vlan(0x0800), ipv4(17, 0, 5), udp(4791)), false},
		{"RoCEv1", frame(0x8915), true},
		{"ARP", frame(0x0806, make([]byte, 28)), false},
		{"LLDP", frame(0x88cc), false},
		{"runt", make([]byte, 20), false},
	}
	vm := newVM(t, false)
	vmPFC := newVM(t, true)
	for _, tt := range tests {
		got, err := vm.Run(tt.b)
		if err != nil {
			t.Fatal(err)
		}
		if (got != 0) != tt.want {
			t.Errorf("%s: kept %d bytes, want kept=%v", tt.name, got, tt.want)
		}
	}
	pfc := frame(0x8808, []byte{0x01, 0x01, 0x00, 0x08})
	if got, _ := vm.Run(pfc); got != 0 {
		t.Errorf("PFC frame kept without pfc")
	}
	if got, _ := vmPFC.Run(pfc); got == 0 {
		t.Errorf("PFC frame dropped with pfc")
	}
}

func TestRoCEFilterExtraPorts(t *testing.T) {
	raw, err := capture.RoCEFilter(false, 4792)
	if err != nil {
		t.Fatal(err)
	}
	ins, _ := bpf.Disassemble(raw)
	vm, err := bpf.NewVM(ins)
	if err != nil {
		t.Fatal(err)
	}
	for port, want := range map[uint16]bool{4791: true, 4792: true, 4793: false} {
		got, _ := vm.Run(frame(0x0800, ipv4(17, 0, 5), udp(port)))
		if (got != 0) != want {
			t.Errorf("port %d: kept %d, want kept=%v", port, got, want)
		}
	}
}

func TestParseBPF(t *testing.T) {
	// tcpdump -ddd 'udp dst port 4791' on Ethernet, IPv4 only, shortened.
	good := "4\n40 0 0 12\n21 0 1 2048\n6 0 0 262144\n6 0 0 0\n"
	raw, err := capture.ParseBPF(good)
	if err != nil || len(raw) != 4 || raw[1].K != 2048 || raw[1].Jf != 1 {
		t.Fatalf("ParseBPF: %v %v", raw, err)
	}
	if raw2, err := capture.ParseBPF("4,40 0 0 12,21 0 1 2048,6 0 0 262144,6 0 0 0"); err != nil || len(raw2) != 4 {
		t.Errorf("comma form: %v %v", raw2, err)
	}
	for _, bad := range []string{"", "udp port 4791", "3\n40 0 0 12", "1\n40 0 12", "1\n99999 0 0 0"} {
		if _, err := capture.ParseBPF(bad); err == nil {
			t.Errorf("ParseBPF(%q) succeeded", bad)
		}
	}
}

func TestSetSnaplen(t *testing.T) {
	raw, err := capture.RoCEFilter(false)
	if err != nil {
		t.Fatal(err)
	}
	capture.SetSnaplen(raw, 96)
	ins, _ := bpf.Disassemble(raw)
	vm, err := bpf.NewVM(ins)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := vm.Run(frame(0x0800, ipv4(17, 0, 5), udp(4791))); got != 96 {
		t.Errorf("kept %d bytes of a RoCE frame, want 96", got)
	}
	if got, _ := vm.Run(frame(0x0806, make([]byte, 28))); got != 0 {
		t.Errorf("kept %d bytes of ARP", got)
	}
}

// FuzzParseBPF: any -f text gives a program or an error, never a panic;
// a program it accepts disassembles.
func FuzzParseBPF(f *testing.F) {
	f.Add("4\n40 0 0 12\n21 0 1 2048\n6 0 0 262144\n6 0 0 0\n")
	f.Add("1,6 0 0 0")
	f.Add("udp port 4791")
	f.Fuzz(func(t *testing.T, s string) {
		raw, err := capture.ParseBPF(s)
		if err != nil {
			return
		}
		if _, ok := bpf.Disassemble(raw); !ok || len(raw) == 0 {
			t.Fatalf("ParseBPF(%q) accepted %v", s, raw)
		}
	})
}
