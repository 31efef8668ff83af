package decode_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"net"
	"os"
	"path/filepath"
	"testing"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"

	"github.com/rocetap/rocetap/decode"
	"github.com/rocetap/rocetap/internal/testcap"
)

// fixSpec describes one test frame for the builders below.
type fixSpec struct {
	v6      bool
	vlans   []uint16 // 802.1Q tags, outermost first (the outer one 802.1ad when there are two)
	tos     uint8    // IPv4 TOS or IPv6 traffic class
	ttl     uint8    // IPv4 TTL or IPv6 hop limit
	flow    uint32   // IPv6 flow label
	sport   uint16   // UDP source port (default 49152)
	udpCsum uint16   // written over the UDP checksum after serializing
	bth     decode.BTH
	exts    []gopacket.SerializableLayer
	payload []byte // payload and pad bytes
	// native InfiniBand
	lrh decode.LRH
	grh *decode.GRH
}

var (
	fixSrcMAC = net.HardwareAddr{0x02, 0x00, 0x0a, 0x4d, 0x00, 0x01}
	fixDstMAC = net.HardwareAddr{0x02, 0x00, 0x0a, 0x4d, 0x00, 0x02}
	fixGID1   = [16]byte{0xfe, 0x80, 12: 0x0a, 0x4d, 0x00, 0x01}
	fixGID2   = [16]byte{0xfe, 0x80, 12: 0x0a, 0x4d, 0x00, 0x02}
)

func fixSerialize(t testing.TB, ls ...gopacket.SerializableLayer) []byte {
	t.Helper()
	buf := gopacket.NewSerializeBuffer()
	opts := gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true}
	if err := gopacket.SerializeLayers(buf, opts, ls...); err != nil {
		t.Fatalf("serialize: %v", err)
	}
	return bytes.Clone(buf.Bytes())
}

// fixEthHeader returns the Ethernet and VLAN layers for s, ending in et.
func fixEthHeader(s *fixSpec, et layers.EthernetType) []gopacket.SerializableLayer {
	eth := &layers.Ethernet{SrcMAC: fixSrcMAC, DstMAC: fixDstMAC, EthernetType: et}
	ls := []gopacket.SerializableLayer{eth}
	if len(s.vlans) == 0 {
		return ls
	}
	eth.EthernetType = layers.EthernetTypeDot1Q
	if len(s.vlans) > 1 {
		eth.EthernetType = layers.EthernetTypeQinQ
	}
	for i, id := range s.vlans {
		next := layers.EthernetTypeDot1Q
		if i == len(s.vlans)-1 {
			next = et
		}
		ls = append(ls, &layers.Dot1Q{VLANIdentifier: id, Priority: 3, Type: next})
	}
	return ls
}

// fixRoCEv2 returns an Ethernet frame with a zero ICRC.
func fixRoCEv2(t testing.TB, s fixSpec) []byte {
	t.Helper()
	sport := s.sport
	if sport == 0 {
		sport = 49152
	}
	udp := &layers.UDP{SrcPort: layers.UDPPort(sport), DstPort: decode.RoCEv2Port}
	var ls []gopacket.SerializableLayer
	if s.v6 {
		ip := &layers.IPv6{Version: 6, TrafficClass: s.tos, FlowLabel: s.flow, HopLimit: s.ttl,
			NextHeader: layers.IPProtocolUDP, SrcIP: net.ParseIP("fd77::1"), DstIP: net.ParseIP("fd77::2")}
		_ = udp.SetNetworkLayerForChecksum(ip)
		ls = append(fixEthHeader(&s, layers.EthernetTypeIPv6), ip)
	} else {
		ip := &layers.IPv4{Version: 4, IHL: 5, TOS: s.tos, TTL: s.ttl, Flags: layers.IPv4DontFragment,
			Protocol: layers.IPProtocolUDP, SrcIP: net.IPv4(10, 77, 0, 1), DstIP: net.IPv4(10, 77, 0, 2)}
		_ = udp.SetNetworkLayerForChecksum(ip)
		ls = append(fixEthHeader(&s, layers.EthernetTypeIPv4), ip)
	}
	bth := s.bth
	ls = append(ls, udp, &bth)
	ls = append(ls, s.exts...)
	ls = append(ls, gopacket.Payload(s.payload), &decode.ICRC{})
	frame := fixSerialize(t, ls...)
	// Overwrite the UDP checksum (the ICRC treats it as variant).
	off := 14 + 4*len(s.vlans) + 20
	if s.v6 {
		off = 14 + 4*len(s.vlans) + 40
	}
	binary.BigEndian.PutUint16(frame[off+6:], s.udpCsum)
	return frame
}

// fixRoCEv1 returns an Ethernet frame (EtherType 0x8915) with a zero ICRC.
func fixRoCEv1(t testing.TB, s fixSpec) []byte {
	t.Helper()
	grh := &decode.GRH{IPVer: 6, TrafficClass: s.tos, FlowLabel: s.flow, HopLimit: s.ttl,
		NextHeader: decode.GRHNextHeaderIBA, SGID: fixGID1, DGID: fixGID2}
	bth := s.bth
	ls := append(fixEthHeader(&s, layers.EthernetType(decode.EtherTypeRoCEv1)), grh, &bth)
	ls = append(ls, s.exts...)
	ls = append(ls, gopacket.Payload(s.payload), &decode.ICRC{})
	return fixSerialize(t, ls...)
}

// fixIB returns a native InfiniBand packet (LRH first) with zero ICRC and
// VCRC. s.grh selects LNH 3 (global) over 2 (local).
func fixIB(t testing.TB, s fixSpec) []byte {
	t.Helper()
	lrh := s.lrh
	lrh.LNH = decode.LNHLocal
	ls := []gopacket.SerializableLayer{&lrh}
	if s.grh != nil {
		lrh.LNH = decode.LNHGlobal
		ls = append(ls, s.grh)
	}
	bth := s.bth
	ls = append(ls, &bth)
	ls = append(ls, s.exts...)
	// ICRC and VCRC append themselves: the last layer serializes first.
	ls = append(ls, gopacket.Payload(s.payload), &decode.VCRC{}, &decode.ICRC{})
	frame := fixSerialize(t, ls...)
	if s.grh != nil {
		// GRH PayLen runs from BTH through the ICRC, without the VCRC.
		binary.BigEndian.PutUint16(frame[decode.LRHLen+4:], uint16(len(frame)-decode.LRHLen-decode.GRHLen-decode.VCRCLen))
	}
	return frame
}

func fixDecode(frame []byte, link decode.LinkType) *decode.Packet {
	p := &decode.Packet{}
	p.Frame.Len = len(frame)
	decode.Decode(p, frame, link)
	return p
}

// trailer returns the offset of the ICRC in a frame built above (RoCEv2 may
// carry Ethernet padding after it).
func fixICRCOffset(t testing.TB, frame []byte, link decode.LinkType) int {
	t.Helper()
	p := fixDecode(frame, link)
	off := p.Offset(p.ICRC.Contents)
	if p.Has&decode.HdrICRC == 0 || off < 0 {
		t.Fatalf("no ICRC in frame (flags %v, err %v)", p.Flags.Names(), p.Err)
	}
	return off
}

func fixSamples(t testing.TB) map[string]struct {
	link  decode.LinkType
	frame []byte
} {
	write := fixSpec{
		tos: 0x1a, ttl: 63, flow: 0xabcde, udpCsum: 0x1234,
		bth:     decode.BTH{Opcode: decode.Opcode(decode.TransportRC | decode.OpWriteOnly), PadCount: 2, PKey: 0xffff, FECN: true, DestQP: 0x11, AckReq: true, PSN: 0xfffffe},
		exts:    []gopacket.SerializableLayer{&decode.RETH{VA: 0x7f00dead0000, RKey: 0x1234, DMALen: 6}},
		payload: []byte{1, 2, 3, 4, 5, 6, 0, 0},
	}
	ack := fixSpec{
		ttl:  64,
		bth:  decode.BTH{Opcode: decode.Opcode(decode.TransportRC | decode.OpAcknowledge), PKey: 0x8001, BECN: true, DestQP: 0x12, PSN: 7},
		exts: []gopacket.SerializableLayer{&decode.AETH{Syndrome: 0x1f, MSN: 3}},
	}
	v6 := write
	v6.v6 = true
	vlan := ack
	vlan.vlans = []uint16{100, 200}
	ib := write
	ib.lrh = decode.LRH{VL: 2, SL: 3, DLID: 0x11, SLID: 0x22}
	ibg := ack
	ibg.lrh = decode.LRH{VL: 15, DLID: 0xc001, SLID: 4}
	ibg.grh = &decode.GRH{IPVer: 6, TrafficClass: 5, FlowLabel: 9, HopLimit: 2, NextHeader: decode.GRHNextHeaderIBA, SGID: fixGID1, DGID: fixGID2}
	erf := fixIB(t, ib)
	erfRec := make([]byte, 16, 16+len(erf))
	erfRec[8] = decode.ERFTypeInfiniBand
	binary.BigEndian.PutUint16(erfRec[10:], uint16(16+len(erf)))
	binary.BigEndian.PutUint16(erfRec[14:], uint16(len(erf)))
	erfRec = append(erfRec, erf...)
	eth := fixRoCEv2(t, write)
	erfEth := make([]byte, 18, 18+len(eth))
	erfEth[8] = decode.ERFTypeEth
	binary.BigEndian.PutUint16(erfEth[10:], uint16(18+len(eth)))
	binary.BigEndian.PutUint16(erfEth[14:], uint16(len(eth)))
	erfEth = append(erfEth, eth...)
	return map[string]struct {
		link  decode.LinkType
		frame []byte
	}{
		"rocev2/ipv4 write":   {decode.LinkTypeEthernet, fixRoCEv2(t, write)},
		"rocev2/ipv4 ack":     {decode.LinkTypeEthernet, fixRoCEv2(t, ack)},
		"rocev2/ipv6 write":   {decode.LinkTypeEthernet, fixRoCEv2(t, v6)},
		"rocev2/qinq ack":     {decode.LinkTypeEthernet, fixRoCEv2(t, vlan)},
		"rocev1 write":        {decode.LinkTypeEthernet, fixRoCEv1(t, write)},
		"ib local write":      {decode.LinkTypeInfiniBand, fixIB(t, ib)},
		"ib global ack":       {decode.LinkTypeInfiniBand, fixIB(t, ibg)},
		"erf ib local write":  {decode.LinkTypeERF, erfRec},
		"erf eth write":       {decode.LinkTypeERF, erfEth},
		"raw ip rocev2 write": {decode.LinkTypeRaw, fixRoCEv2(t, write)[14:]},
	}
}

func TestFixCRCsRoundTrip(t *testing.T) {
	for name, tc := range fixSamples(t) {
		t.Run(name, func(t *testing.T) {
			frame := tc.frame
			if err := decode.FixCRCs(frame, tc.link); err != nil {
				t.Fatalf("FixCRCs: %v", err)
			}
			p := fixDecode(frame, tc.link)
			if p.ICRCStatus != decode.CRCGood {
				t.Fatalf("after FixCRCs: ICRC %s (captured %08x, computed %08x)", p.ICRCStatus, p.ICRC.CRC, p.ICRCComputed)
			}
			ib := p.Encap == decode.EncapIB
			if ib && p.VCRCStatus != decode.CRCGood {
				t.Fatalf("after FixCRCs: VCRC %s", p.VCRCStatus)
			}
			fixed := bytes.Clone(frame)
			// Corrupt the ICRC (and VCRC): Decode must say bad, FixCRCs must
			// restore the very same bytes.
			off := p.Offset(p.ICRC.Contents)
			frame[off] ^= 0x5a
			frame[off+3] ^= 0x01
			if ib {
				frame[off+4] ^= 0xff
			}
			if p := fixDecode(frame, tc.link); p.ICRCStatus != decode.CRCBad {
				t.Fatalf("corrupted ICRC: status %s, want bad", p.ICRCStatus)
			}
			if err := decode.FixCRCs(frame, tc.link); err != nil {
				t.Fatalf("FixCRCs: %v", err)
			}
			if !bytes.Equal(frame, fixed) {
				t.Fatalf("FixCRCs after corruption:\n got %x\nwant %x", frame, fixed)
			}
			// A variant field changed on the way (ECN, TTL, FECN) leaves the
			// ICRC good.
			if p.Encap == decode.EncapRoCEv2 && p.Has&decode.HdrIPv4 != 0 {
				ip := p.Offset(p.IB) - 28
				frame[ip+1] |= 3 // CE
				frame[ip+8]--    // TTL
				if p := fixDecode(frame, tc.link); p.ICRCStatus != decode.CRCGood {
					t.Fatalf("after changing variant fields: ICRC %s, want good", p.ICRCStatus)
				}
			}
		})
	}
}

func TestFixCRCsErrors(t *testing.T) {
	ack := fixSpec{
		ttl:  64,
		bth:  decode.BTH{Opcode: decode.Opcode(decode.TransportRC | decode.OpAcknowledge), PKey: 0xffff, DestQP: 0x12},
		exts: []gopacket.SerializableLayer{&decode.AETH{Syndrome: 0x1f}},
	}
	full := fixRoCEv2(t, ack)
	pfc := make([]byte, 60)
	copy(pfc, []byte{0x01, 0x80, 0xc2, 0, 0, 1, 2, 0, 0, 0, 0, 1, 0x88, 0x08, 0x01, 0x01})
	notRoCE := bytes.Clone(full)
	binary.BigEndian.PutUint16(notRoCE[14+20+2:], 4792)
	ib := fixIB(t, fixSpec{bth: ack.bth, exts: ack.exts, lrh: decode.LRH{DLID: 1, SLID: 2}})
	tests := []struct {
		name    string
		frame   []byte
		link    decode.LinkType
		wantErr error
	}{
		{"pfc", pfc, decode.LinkTypeEthernet, decode.ErrNoTransport},
		{"udp to another port", notRoCE, decode.LinkTypeEthernet, decode.ErrNoTransport},
		{"cut inside ethernet", full[:10], decode.LinkTypeEthernet, decode.ErrTruncated},
		{"cut inside bth", full[:14+20+8+6], decode.LinkTypeEthernet, decode.ErrTruncated},
		{"cut inside icrc", full[:len(full)-2], decode.LinkTypeEthernet, decode.ErrNoCRC},
		{"ib cut inside vcrc", ib[:len(ib)-1], decode.LinkTypeInfiniBand, decode.ErrNoCRC},
		{"ib cut inside bth", ib[:12], decode.LinkTypeInfiniBand, decode.ErrTruncated},
		{"unsupported link", full, 12345, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			frame := bytes.Clone(tc.frame)
			err := decode.FixCRCs(frame, tc.link)
			if err == nil {
				t.Fatalf("FixCRCs returned nil, want an error")
			}
			if tc.wantErr != nil && !errors.Is(err, tc.wantErr) {
				t.Fatalf("FixCRCs: %v, want errors.Is %v", err, tc.wantErr)
			}
			if !bytes.Equal(frame, tc.frame) {
				t.Fatalf("FixCRCs modified a frame it rejected")
			}
		})
	}
}

// fixRealCaptures returns the paths of the Soft-RoCE captures: the directory
// in ROCETAP_CAPTURES, else testdata/rxe/ in the repository, else
// ../shared/captures next to the repository.
func fixRealCaptures(t testing.TB) []string {
	t.Helper()
	dirs := []string{filepath.Join("..", "testdata", "rxe")}
	if d := os.Getenv("ROCETAP_CAPTURES"); d != "" {
		dirs = append([]string{d}, dirs...)
	}
	dirs = append(dirs, filepath.Join("..", "..", "shared", "captures"))
	for _, d := range dirs {
		if m, _ := filepath.Glob(filepath.Join(d, "*.pcap")); len(m) > 0 {
			return m
		}
	}
	return nil
}

type fixCaptured struct {
	name  string
	link  decode.LinkType
	data  []byte
	frame int
}

func fixReadCapture(t testing.TB, path string) []fixCaptured {
	t.Helper()
	var out []fixCaptured
	for _, fr := range testcap.ReadPcap(t, path) {
		if len(fr.Data) != fr.Len {
			t.Fatalf("%s frame %d: snapped (%d of %d bytes)", path, fr.Number, len(fr.Data), fr.Len)
		}
		out = append(out, fixCaptured{fr.File, fr.LinkType, fr.Data, fr.Number})
	}
	return out
}

func TestFixCRCsRealCaptures(t *testing.T) {
	paths := fixRealCaptures(t)
	if len(paths) == 0 {
		t.Skip("no Soft-RoCE captures found (testdata/rxe/ or ROCETAP_CAPTURES)")
	}
	var n int
	for _, path := range paths {
		for _, cf := range fixReadCapture(t, path) {
			orig := bytes.Clone(cf.data)
			off := fixICRCOffset(t, cf.data, cf.link)
			clear(cf.data[off : off+decode.ICRCLen])
			if err := decode.FixCRCs(cf.data, cf.link); err != nil {
				t.Errorf("%s frame %d: FixCRCs: %v", cf.name, cf.frame, err)
				continue
			}
			if !bytes.Equal(cf.data, orig) {
				t.Errorf("%s frame %d: ICRC %x, the capture has %x", cf.name, cf.frame, cf.data[off:off+4], orig[off:off+4])
			}
			n++
		}
	}
	t.Logf("%d real frames from %d captures: FixCRCs reproduced every ICRC", n, len(paths))
}
