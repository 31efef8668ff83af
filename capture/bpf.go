package capture

import (
	"fmt"
	"strconv"
	"strings"

	"golang.org/x/net/bpf"
)

// RoCE's numbers, for the capture filters.
const (
	etherTypeIPv4   = 0x0800
	etherTypeIPv6   = 0x86DD
	etherTypeVLAN   = 0x8100
	etherTypeQinQ   = 0x88A8
	etherTypeRoCEv1 = 0x8915
	etherTypeMACCtl = 0x8808 // PAUSE and PFC frames
	udpRoCEv2Port   = 4791
	ipProtoUDP      = 17
)

// RoCEFilter assembles the built-in capture filter for Ethernet frames: it
// keeps RoCEv2 (UDP destination port 4791, or one of extraPorts, over IPv4
// that is not a later fragment, and over IPv6 with UDP as the first next
// header), RoCEv1 (ethertype 0x8915), untagged or behind one 802.1Q or
// 802.1ad tag, and with pfc the MAC control frames that carry PFC and
// PAUSE (ethertype 0x8808). It keeps whole packets: the snapshot length
// is applied by the ring.
//
// A VLAN tag the NIC stripped into the packet's metadata is not in the
// bytes the filter sees, so tagged traffic on such a NIC takes the
// untagged path.
func RoCEFilter(pfc bool, extraPorts ...uint16) ([]bpf.RawInstruction, error) {
	ports := append([]uint16{udpRoCEv2Port}, extraPorts...)
	var prog []bpf.Instruction
	accept := bpf.RetConstant{Val: 0x40000}
	reject := bpf.RetConstant{Val: 0}
	// Each section is placed with labels resolved afterwards: skips are
	// relative, so the program is built as blocks with known lengths.
	type block struct {
		name string
		ins  []bpf.Instruction
	}
	var blocks []block
	// l3 returns the blocks that look at the ethertype at offset etOff.
	l3 := func(tag string, etOff uint32) {
		ip4 := etOff + 2 // the IP header starts right after the ethertype
		var ins []bpf.Instruction
		ins = append(ins, bpf.LoadAbsolute{Off: etOff, Size: 2})
		ins = append(ins, jumpTo(etherTypeRoCEv1, "accept"), jumpTo(etherTypeIPv4, tag+"ip4"), jumpTo(etherTypeIPv6, tag+"ip6"))
		if pfc {
			ins = append(ins, jumpTo(etherTypeMACCtl, "accept"))
		}
		if tag == "" {
			ins = append(ins, jumpTo(etherTypeVLAN, "vlan"), jumpTo(etherTypeQinQ, "vlan"))
		}
		ins = append(ins, gotoLabel("reject"))
		blocks = append(blocks, block{tag + "l3", ins})
		// IPv4: UDP, not a later fragment, destination port.
		ins = []bpf.Instruction{
			bpf.LoadAbsolute{Off: ip4 + 9, Size: 1},
			jumpIfNot(ipProtoUDP, "reject"),
			bpf.LoadAbsolute{Off: ip4 + 6, Size: 2},
			bpf.JumpIf{Cond: bpf.JumpBitsSet, Val: 0x1FFF, SkipTrue: 0xFF}, // resolved below to "reject"
			bpf.LoadMemShift{Off: ip4},
			bpf.LoadIndirect{Off: ip4 + 2, Size: 2},
		}
		for _, p := range ports {
			ins = append(ins, jumpTo(uint32(p), "accept"))
		}
		ins = append(ins, gotoLabel("reject"))
		blocks = append(blocks, block{tag + "ip4", ins})
		// IPv6: UDP right after the fixed header.
		ins = []bpf.Instruction{
			bpf.LoadAbsolute{Off: ip4 + 6, Size: 1},
			jumpIfNot(ipProtoUDP, "reject"),
			bpf.LoadAbsolute{Off: ip4 + 40 + 2, Size: 2},
		}
		for _, p := range ports {
			ins = append(ins, jumpTo(uint32(p), "accept"))
		}
		ins = append(ins, gotoLabel("reject"))
		blocks = append(blocks, block{tag + "ip6", ins})
	}
	l3("", 12)
	l3("vlan", 16)
	blocks = append(blocks, block{"accept", []bpf.Instruction{accept}}, block{"reject", []bpf.Instruction{reject}})
	// "vlan" is the tagged l3 block.
	start := map[string]int{}
	n := 0
	for _, b := range blocks {
		start[b.name] = n
		n += len(b.ins)
	}
	start["vlan"] = start["vlanl3"]
	for _, b := range blocks {
		for i, in := range b.ins {
			pc := start[b.name] + i
			resolved, err := resolve(in, pc, start)
			if err != nil {
				return nil, err
			}
			prog = append(prog, resolved)
		}
	}
	return bpf.Assemble(prog)
}

// Jumps to labels, resolved by resolve: the label travels in a
// placeholder instruction.
type labelJump struct {
	val    uint32
	label  string
	negate bool // jump when not equal
	always bool
}

func (l labelJump) Assemble() (bpf.RawInstruction, error) {
	return bpf.RawInstruction{}, fmt.Errorf("unresolved jump to %q", l.label)
}

func jumpTo(val uint32, label string) bpf.Instruction { return labelJump{val: val, label: label} }
func jumpIfNot(val uint32, label string) bpf.Instruction {
	return labelJump{val: val, label: label, negate: true}
}
func gotoLabel(label string) bpf.Instruction { return labelJump{label: label, always: true} }

// resolve turns a labelJump at pc into a relative jump; the fragment test
// (JumpBitsSet with SkipTrue 0xFF) jumps to "reject".
func resolve(in bpf.Instruction, pc int, start map[string]int) (bpf.Instruction, error) {
	rel := func(label string) (uint8, error) {
		to, ok := start[label]
		if !ok {
			return 0, fmt.Errorf("bpf: no label %q", label)
		}
		d := to - pc - 1
		if d < 0 || d > 255 {
			return 0, fmt.Errorf("bpf: jump from %d to %q (%d) out of range", pc, label, to)
		}
		return uint8(d), nil
	}
	switch j := in.(type) {
	case labelJump:
		d, err := rel(j.label)
		if err != nil {
			return nil, err
		}
		switch {
		case j.always:
			return bpf.Jump{Skip: uint32(d)}, nil
		case j.negate:
			return bpf.JumpIf{Cond: bpf.JumpEqual, Val: j.val, SkipFalse: d}, nil
		}
		return bpf.JumpIf{Cond: bpf.JumpEqual, Val: j.val, SkipTrue: d}, nil
	case bpf.JumpIf:
		if j.SkipTrue == 0xFF {
			d, err := rel("reject")
			if err != nil {
				return nil, err
			}
			j.SkipTrue = d
			return j, nil
		}
	}
	return in, nil
}

// ParseBPF reads a compiled classic BPF program as tcpdump -ddd prints it
// (the instruction count, then one "code jt jf k" line per instruction),
// with lines separated by newlines or commas, as tc and iptables take it.
func ParseBPF(s string) ([]bpf.RawInstruction, error) {
	fields := strings.FieldsFunc(strings.TrimSpace(s), func(r rune) bool { return r == ',' || r == '\n' || r == ';' })
	if len(fields) < 2 {
		return nil, fmt.Errorf("compiled BPF %q: want the instruction count, then one \"code jt jf k\" line per instruction (tcpdump -ddd output)", s)
	}
	n, err := strconv.Atoi(strings.TrimSpace(fields[0]))
	if err != nil || n != len(fields)-1 || n > 4096 {
		return nil, fmt.Errorf("compiled BPF: the count %q does not match the %d instructions that follow (tcpdump -ddd output, lines joined with commas)", fields[0], len(fields)-1)
	}
	out := make([]bpf.RawInstruction, 0, n)
	for i, f := range fields[1:] {
		var v [4]uint64
		parts := strings.Fields(f)
		if len(parts) != 4 {
			return nil, fmt.Errorf("compiled BPF instruction %d %q: want \"code jt jf k\"", i+1, f)
		}
		for j, p := range parts {
			bits := []int{16, 8, 8, 32}[j]
			if v[j], err = strconv.ParseUint(p, 0, bits); err != nil {
				return nil, fmt.Errorf("compiled BPF instruction %d %q: %q is not a %d-bit number", i+1, f, p, bits)
			}
		}
		out = append(out, bpf.RawInstruction{Op: uint16(v[0]), Jt: uint8(v[1]), Jf: uint8(v[2]), K: uint32(v[3])})
	}
	if _, ok := bpf.Disassemble(out); !ok {
		// Disassemble reports raw instructions it cannot decode; the
		// kernel would refuse them too.
		return nil, fmt.Errorf("compiled BPF: instructions the kernel does not know (tcpdump -ddd output expected)")
	}
	return out, nil
}

// SetSnaplen makes a filter keep at most snaplen bytes of a packet: every
// "return k" instruction with k above snaplen returns snaplen. On an
// AF_PACKET socket the filter's return value is the snapshot length.
func SetSnaplen(prog []bpf.RawInstruction, snaplen uint32) {
	const retK = 0x06 // BPF_RET | BPF_K
	for i := range prog {
		if prog[i].Op == retK && prog[i].K > snaplen {
			prog[i].K = snaplen
		}
	}
}

// skipOutgoing is a filter prefix that drops packets the host sent
// (packet type PACKET_OUTGOING, the Linux ancillary load SKF_AD_PKTTYPE)
// and falls through to the program after it for the others. The jumps of
// a classic BPF program are relative, so any program can follow it.
func skipOutgoing() []bpf.RawInstruction {
	const packetOutgoing = 4 // linux/if_packet.h
	prog, err := bpf.Assemble([]bpf.Instruction{
		bpf.LoadExtension{Num: bpf.ExtType},
		bpf.JumpIf{Cond: bpf.JumpNotEqual, Val: packetOutgoing, SkipTrue: 1},
		bpf.RetConstant{Val: 0},
	})
	if err != nil {
		panic("capture: skipOutgoing does not assemble: " + err.Error()) // a constant program
	}
	return prog
}
