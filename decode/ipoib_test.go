package decode_test

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"strings"
	"testing"

	"github.com/gopacket/gopacket"

	"github.com/rocetap/rocetap/decode"
	"github.com/rocetap/rocetap/internal/testcap"
)

// ipoibFiles are the synthetic captures of IPoIB and of the protocols
// rocetap summarises (internal/synth/ipoib.go).
var ipoibFiles = []string{"../testdata/synth/ipoib_ib.pcap", "../testdata/synth/ipoib_ib0.pcapng", "../testdata/synth/summaries.pcap"}

func ipoibFrames(t testing.TB) []testcap.Frame {
	var out []testcap.Frame
	for _, f := range ipoibFiles {
		out = append(out, testcap.ReadFile(t, f)...)
	}
	return out
}

// fieldText returns every value of the named field in p, as -T fields
// prints them, comma-separated.
func fieldText(p *decode.Packet, name string) string {
	f := decode.FieldByName(name)
	var parts []string
	for _, v := range f.Values(p, nil) {
		parts = append(parts, string(f.AppendValue(nil, v)))
	}
	return strings.Join(parts, ",")
}

// TestIPoIBDecode checks values read off the frames by hand (the hex of
// the committed captures, RFC 4391's layouts), not from the builder.
func TestIPoIBDecode(t *testing.T) {
	frames := map[string][]testcap.Frame{}
	for _, f := range ipoibFiles {
		frames[f[strings.LastIndexByte(f, '/')+1:]] = testcap.ReadFile(t, f)
	}
	tests := []struct {
		file  string
		frame int
		want  map[string]string
		node  string // source node
	}{
		{"ipoib_ib.pcap", 1, map[string]string{"ipoib.type": "0x0806", "arp.hw.type": "32", "arp.hw.size": "20", "arp.opcode": "1",
			"arp.src.hw": "00000048fe800000000000000002c9030000000a", "arp.src.proto_ipv4": "10.77.0.1", "arp.dst.proto_ipv4": "10.77.0.2",
			"arp.src.hw_mac": "", "infiniband.bth.destqp": "0xffffff", "infiniband.deth.q_key": "0x0000000000000b1b"}, "fe80::2:c903:0:a"},
		{"ipoib_ib.pcap", 2, map[string]string{"ipoib.type": "0x0806", "arp.opcode": "2", "infiniband.grh.sgid": ""}, "lid:2"},
		{"ipoib_ib.pcap", 3, map[string]string{"ip.src": "10.77.0.1", "ip.dst": "10.77.0.2", "icmp.type": "8", "icmp.ident": "3329",
			"icmp.seq": "1", "icmp.seq_le": "256", "data.len": "16", "rocetap.icrc.status": "good", "rocetap.vcrc.status": "good"}, "lid:1"},
		{"ipoib_ib.pcap", 5, map[string]string{"udp.srcport": "40000", "udp.dstport": "40001", "data.len": "10"}, "fe80::2:c903:0:a"},
		{"ipoib_ib.pcap", 7, map[string]string{"tcp.flags": "0x0012", "tcp.flags.syn": "1", "tcp.flags.ack": "1", "tcp.seq_raw": "5000", "tcp.ack_raw": "1001", "tcp.len": "0"}, "lid:2"},
		{"ipoib_ib.pcap", 8, map[string]string{"icmpv6.type": "135", "icmpv6.nd.ns.target_address": "fe80::2:c903:0:b", "icmpv6.opt.type": "1", "icmpv6.opt.length": "3"}, "fe80::2:c903:0:a"},
		{"ipoib_ib.pcap", 11, map[string]string{"infiniband.bth.opcode": "4", "ipoib.type": "0x0800", "tcp.flags.push": "1", "tcp.len": "24", "data.len": "24"}, "lid:1"},
		{"ipoib_ib.pcap", 12, map[string]string{"ipoib.type": "", "ip.src": "", "infiniband.aeth.syndrome": "31"}, "lid:2"},
		{"ipoib_ib0.pcapng", 1, map[string]string{"sll.hatype": "32", "sll.halen": "20", "arp.hw.size": "20", "ipoib.type": ""}, ""},
		{"ipoib_ib0.pcapng", 7, map[string]string{"ipoib.type": "0x0800", "ipoib.daddr.qpn": "0x000049", "ipoib.dgid": "fe80::2:c903:0:b", "ipoib.grh.sqpn": "", "icmp.ident": "4097"}, "10.77.0.1"},
		{"ipoib_ib0.pcapng", 8, map[string]string{"ipoib.grh.ipver": "6", "ipoib.grh.tclass": "18", "ipoib.grh.flowlabel": "9320", "ipoib.grh.sqpn": "0x000048", "ipoib.grh.sgid": "fe80::2:c903:0:a", "ipoib.daddr.qpn": ""}, "10.77.0.1"},
		{"summaries.pcap", 18, map[string]string{"lldp.chassis.id.mac": "02:00:5e:10:00:0a", "lldp.port.id": "eth2", "lldp.time_to_live": "120"}, ""},
		{"summaries.pcap", 19, map[string]string{"rocetap.encap": "RoCEv1", "ipoib.type": "0x0800", "icmp.type": "8", "ip.ttl": "64"}, "fe80::2:c903:0:a"},
	}
	var p decode.Packet
	for _, tc := range tests {
		fr := frames[tc.file][tc.frame-1]
		p.Frame = decode.Frame{Number: fr.Number, Len: fr.Len}
		decode.Decode(&p, fr.Data, fr.LinkType)
		if p.Err != nil {
			t.Errorf("%s frame %d: %v", tc.file, tc.frame, p.Err)
		}
		for name, want := range tc.want {
			if got := fieldText(&p, name); got != want {
				t.Errorf("%s frame %d %s = %q, want %q", tc.file, tc.frame, name, got, want)
			}
		}
		src, _, ok := p.Nodes()
		if got := src.String(); tc.node != "" && (!ok || got != tc.node) {
			t.Errorf("%s frame %d: source node %q, want %q (IPoIB's IP header is payload, not the node)", tc.file, tc.frame, got, tc.node)
		}
	}
}

// TestIsIPoIB: which SEND payloads are IPoIB.
func TestIsIPoIB(t *testing.T) {
	ipoib := func(et uint16, body []byte) []byte {
		return append([]byte{byte(et >> 8), byte(et), 0, 0}, body...)
	}
	ip4 := func(total int, n int) []byte { // an IPv4 header saying total, n bytes present
		b := make([]byte, n)
		b[0] = 0x45
		binary.BigEndian.PutUint16(b[2:], uint16(total))
		return b
	}
	ip6 := make([]byte, 48)
	ip6[0], ip6[5] = 0x60, 8
	arp := []byte{0, 32, 0x08, 0x00, 20, 4, 0, 1}
	ud, rc := decode.TransportUD.Opcode, decode.TransportRC.Opcode
	tests := []struct {
		name    string
		op      decode.Opcode
		payload []byte
		want    bool
	}{
		{"UD IPv4 filling the SEND", ud(decode.OpSendOnly), ipoib(0x0800, ip4(28, 28)), true},
		{"UD with Immediate, IPv6", ud(decode.OpSendOnlyImm), ipoib(0x86DD, ip6), true},
		{"RC (connected mode) ARP", rc(decode.OpSendOnly), ipoib(0x0806, arp), true},
		{"RC SEND First, IPv4 going on", rc(decode.OpSendFirst), ipoib(0x0800, ip4(2000, 252)), true},
		{"SEND Only whose IPv4 length differs", ud(decode.OpSendOnly), ipoib(0x0800, ip4(40, 28)), false},
		{"NVMe-oF capsule: opcode 0x08, cid 0", rc(decode.OpSendOnly), ipoib(0x0800, make([]byte, 60)), false},
		{"SEND Middle", rc(decode.OpSendMiddle), ipoib(0x0800, ip4(28, 28)), false},
		{"WRITE", rc(decode.OpWriteOnly), ipoib(0x0800, ip4(28, 28)), false},
		{"reserved field not zero", ud(decode.OpSendOnly), []byte{0x08, 0x00, 0, 1, 0x45, 0, 0, 5}, false},
		{"LLDP EtherType", ud(decode.OpSendOnly), ipoib(0x88CC, ip4(28, 28)), false},
		{"Ethernet ARP (6-byte addresses)", ud(decode.OpSendOnly), ipoib(0x0806, []byte{0, 1, 0x08, 0x00, 6, 4, 0, 1}), false},
		{"too short", ud(decode.OpSendOnly), []byte{0x08, 0x00, 0}, false},
	}
	for _, tc := range tests {
		if got := decode.IsIPoIB(tc.op, tc.payload); got != tc.want {
			t.Errorf("%s: IsIPoIB(%s, % x) = %v, want %v", tc.name, tc.op, tc.payload, got, tc.want)
		}
	}
}

// TestIPoIBRoundTrip: the IPoIB header serialises and decodes back.
func TestIPoIBRoundTrip(t *testing.T) {
	buf := gopacket.NewSerializeBuffer()
	h := decode.IPoIBHdr{Type: 0x86DD}
	if err := h.SerializeTo(buf, gopacket.SerializeOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := buf.Bytes(); string(got) != "\x86\xdd\x00\x00" {
		t.Fatalf("serialised % x", got)
	}
	var back decode.IPoIBHdr
	if err := back.DecodeFromBytes(buf.Bytes(), gopacket.NilDecodeFeedback); err != nil || back.Type != 0x86DD || back.Reserved != 0 {
		t.Fatalf("decoded %+v, %v", back, err)
	}
	if err := back.DecodeFromBytes(buf.Bytes()[:3], gopacket.NilDecodeFeedback); err == nil {
		t.Fatal("3 bytes decoded without error")
	}
}

// summaryFields are the fields of the protocols IPoIB carries and rocetap
// summarises.
func summaryFields() []*decode.Field {
	var out []*decode.Field
	for _, f := range decode.Fields() {
		for _, pre := range []string{"ipoib.", "arp.", "icmp.", "icmpv6.", "tcp.", "lldp.", "ip.", "ipv6.", "udp."} {
			if strings.HasPrefix(f.Abbrev, pre) {
				out = append(out, f)
			}
		}
	}
	return out
}

// TestIPoIBTruncation cuts every frame at every byte, as a snapshot length
// does (wire length kept) and as a short packet on the wire: the decode
// never panics, finds no header the whole frame lacks, and every field it
// still shows has the whole frame's value.
func TestIPoIBTruncation(t *testing.T) {
	fields := summaryFields()
	var full, cut decode.Packet
	for _, fr := range ipoibFrames(t) {
		full.Frame = decode.Frame{Len: fr.Len}
		decode.Decode(&full, fr.Data, fr.LinkType)
		want := map[string]string{}
		for _, f := range fields {
			want[f.Abbrev] = fieldText(&full, f.Abbrev)
		}
		for n := 0; n < len(fr.Data); n++ {
			for _, wire := range []int{fr.Len, n} {
				cut.Frame = decode.Frame{Len: wire}
				decode.Decode(&cut, fr.Data[:n], fr.LinkType)
				// A frame cut before its ICRC has no known end: what is
				// left after the headers is payload (HdrPayload).
				if extra := cut.Has &^ full.Has &^ decode.HdrPayload; extra != 0 {
					t.Errorf("%s frame %d cut at %d (wire %d): headers %#x the whole frame lacks", fr.File, fr.Number, n, wire, uint64(extra))
				}
				if cut.Flags&(decode.FlagTruncated|decode.FlagMalformed|decode.FlagICRCUnverifiable|decode.FlagVCRCBad|decode.FlagICRCBad) == 0 && n < len(fr.Data) && cut.Has&(decode.HdrEth) == 0 {
					t.Errorf("%s frame %d cut at %d (wire %d): no flag says the frame is cut", fr.File, fr.Number, n, wire)
				}
				for _, f := range fields {
					got := fieldText(&cut, f.Abbrev)
					// The occurrences left are the first ones of the
					// whole frame (IPoIB over RoCEv2 loses its second
					// IP header first).
					if got == "" || got == want[f.Abbrev] || strings.HasPrefix(want[f.Abbrev], got+",") || f.Abbrev == "ip.len" || f.Abbrev == "ipv6.plen" {
						continue
					}
					// A length field's value is the one in the header, so
					// it stays; what depends on the bytes present (tcp.len,
					// udp payload) may shrink.
					if f.Abbrev == "tcp.len" {
						continue
					}
					t.Errorf("%s frame %d cut at %d (wire %d): %s = %q, whole frame %q", fr.File, fr.Number, n, wire, f.Abbrev, got, want[f.Abbrev])
				}
			}
		}
	}
}

// FuzzDecodeIPoIB feeds bytes to the IPoIB decoders: as a DLT_IPOIB frame,
// as a Linux cooked capture of ib0, and as the payload of a UD SEND on
// native InfiniBand and on RoCEv2. Nothing may panic, and every field must
// format.
func FuzzDecodeIPoIB(f *testing.F) {
	var sp decode.Packet
	for _, fr := range ipoibFrames(f) {
		f.Add(fr.Data)
		sp.Frame.Len = fr.Len
		if decode.Decode(&sp, fr.Data, fr.LinkType); sp.Has&decode.HdrBTH != 0 && sp.Has&decode.HdrIPoIB != 0 {
			f.Add(bytes.Clone(sp.Payload)) // the IPoIB SEND's payload
		}
	}
	f.Add([]byte{0x08, 0x06, 0, 0})
	// A UD SEND Only from LID 1 to LID 2 (LNH 2), QKey 0x0B1B, whose
	// payload the fuzzer gives; PktLen is fixed up, the CRCs left wrong.
	hdr := []byte{0x00, 0x02, 0x00, 0x02, 0x00, 0x00, 0x00, 0x01, // LRH
		0x64, 0x00, 0xff, 0xff, 0x00, 0x00, 0x00, 0x49, 0x00, 0x00, 0x00, 0x01, // BTH
		0x00, 0x00, 0x0b, 0x1b, 0x00, 0x00, 0x00, 0x48} // DETH
	// A RoCEv2/IPv4 UD SEND Only of summaries.pcap: Ethernet, IPv4, UDP,
	// BTH and DETH are its first 62 bytes.
	roce := testcap.ReadFile(f, "../testdata/synth/summaries.pcap")[20].Data
	f.Fuzz(func(t *testing.T, data []byte) {
		var p decode.Packet
		check := func() {
			for _, fl := range decode.Fields() {
				for _, v := range fl.Values(&p, nil) {
					_ = fl.AppendValue(nil, v)
					_ = fl.AppendDisplay(nil, v)
				}
				_ = fl.Span(&p)
				_ = fl.Label(&p)
			}
		}
		p.Frame.Len = len(data)
		decode.Decode(&p, data, decode.LinkTypeIPoIB)
		check()
		sll := append([]byte{0, 0, 0, 32, 0, 20, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, data...)
		if len(data) >= 2 {
			copy(sll[14:], data[:2]) // the protocol field: the data's first two bytes
		}
		p.Frame.Len = len(sll)
		decode.Decode(&p, sll, decode.LinkTypeLinuxSLL)
		check()
		pkt := append(append([]byte(nil), hdr...), data...)
		pkt = append(pkt, make([]byte, -len(pkt)&3+6)...) // pad, ICRC, VCRC
		pkt[9] = byte(-len(data)&3) << 4                  // BTH pad count
		binary.BigEndian.PutUint16(pkt[4:], uint16((len(pkt)-2)/4)&0x7FF)
		p.Frame.Len = len(pkt)
		decode.Decode(&p, pkt, decode.LinkTypeInfiniBand)
		check()
		// The same SEND over RoCEv2/IPv4: the carried IP packet is a
		// second one (HdrInner).
		v2 := append(append(append([]byte(nil), roce[:62]...), data...), make([]byte, -len(data)&3+4)...)
		v2[14+12+1] = byte(-len(data)&3) << 4
		binary.BigEndian.PutUint16(v2[14+2:], uint16(len(v2)-14))
		binary.BigEndian.PutUint16(v2[14+20+4:], uint16(len(v2)-14-20))
		p.Frame.Len = len(v2)
		decode.Decode(&p, v2, decode.LinkTypeEthernet)
		check()
	})
}

// ipoibOracleFrames are the InfiniBand frames of the IPoIB captures
// (native, with and without GRH, and RoCEv1), for the ICRC and VCRC
// oracles of TestICRCScapyOracle.
func ipoibOracleFrames(t *testing.T) []oracleFrame {
	var out []oracleFrame
	for _, fr := range ipoibFrames(t) {
		var p decode.Packet
		p.Frame.Len = fr.Len
		decode.Decode(&p, fr.Data, fr.LinkType)
		if p.Has&decode.HdrICRC == 0 || fr.LinkType != decode.LinkTypeEthernet && fr.LinkType != decode.LinkTypeInfiniBand {
			continue
		}
		out = append(out, oracleFrame{name: fmt.Sprintf("%s#%d", fr.File, fr.Number), link: fr.LinkType, data: fr.Data})
	}
	if len(out) < 14 {
		t.Fatalf("%d IPoIB frames for the CRC oracles, want the 13 of ipoib_ib.pcap and 2 of summaries.pcap", len(out))
	}
	return out
}

// TestNoIPoIBInRealRDMA: none of the real captures (Soft-RoCE verbs and
// CM traffic, NVMe-oF and NFS over RDMA in ../shared/captures/ulp) carries
// IPoIB, and none of their SEND payloads may be taken for it (an NVMe-oF
// capsule can start 08 00 00 00).
func TestNoIPoIBInRealRDMA(t *testing.T) {
	// testdata/ulp holds copies of the kernel's NVMe-oF and NFS captures
	// (../shared/captures/ulp), always there.
	paths := append(testcap.Glob(t, 10, "../testdata/rxe/*.pcap"), testcap.Glob(t, 3, "../testdata/ulp/*.pcap")...)
	var p decode.Packet
	n := 0
	for _, path := range paths {
		for _, fr := range testcap.ReadPcap(t, path) {
			p.Frame.Len = fr.Len
			decode.Decode(&p, fr.Data, fr.LinkType)
			n++
			if p.Has&(decode.HdrIPoIB|decode.HdrInner) != 0 {
				t.Errorf("%s frame %d: taken for IPoIB (%s)", path, fr.Number, fieldText(&p, "rocetap.opcode"))
			}
		}
	}
	if n == 0 {
		t.Fatal("no frames")
	}
}
