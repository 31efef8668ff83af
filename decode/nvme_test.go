package decode

import (
	"encoding/hex"
	"testing"
)

// A Read capsule from the kernel's nvmeof_io.pcap (frame 139): cid 9,
// nsid 1, keyed SGL 4096 bytes at 0xffff8a577f532000 with key 0x2317,
// SLBA 0, NLB 7; and its CQE (frame 146).
const (
	nvmeReadHex = "0240090001000000000000000000000000000000000000000020537f578affff001000172300004f000000000000000007000000000000000000000000000000"
	nvmeCQEHex  = "0000000000000000020001000900" + "0000"
)

func TestDecodeNVMe(t *testing.T) {
	b, _ := hex.DecodeString(nvmeReadHex)
	c, ok := DecodeNVMeCommand(b, false)
	if !ok || c.Opcode != 2 || c.CID != 9 || c.NSID != 1 || c.PSDT != 1 || !c.SGL.Keyed() || c.SGL.Sub != 0xF || c.SGL.Len != 4096 ||
		c.SGL.Key != 0x2317 || c.SGL.Addr != 0xffff8a577f532000 || c.SLBA() != 0 || c.NLB() != 7 || !c.HasLBA() || c.Name() != "Read" {
		t.Errorf("%+v", c)
	}
	q, ok := DecodeNVMeCompletion(mustHex(t, nvmeCQEHex))
	if !ok || q.CID != 9 || q.SQHD != 2 || q.SQID != 1 || q.Code() != 0 || q.StatusName() != "Successful Completion" {
		t.Errorf("%+v", q)
	}
	// status 0x281 (SCT 2, SC 0x81) with the phase tag and DNR set
	q.Status = 0x281<<1 | 1 | 0x8000
	if q.SCT() != 2 || q.SC() != 0x81 || q.StatusName() != "Unrecovered Read Error" {
		t.Errorf("status %#x: SCT %d SC %#x %q", q.Status, q.SCT(), q.SC(), q.StatusName())
	}
	n := NVMeInfo{Kind: NVMeCmd, Cmd: &c}
	if got := n.Summary(); got != "NVMe Read cid=9 nsid=1 slba=0 nlb=7 (8 blocks)" {
		t.Errorf("summary %q", got)
	}
}

func mustHex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestNVMeTruncated: a capsule cut at every byte decodes only when whole.
func TestNVMeTruncated(t *testing.T) {
	b := mustHex(t, nvmeReadHex)
	for n := 0; n <= len(b); n++ {
		if _, ok := DecodeNVMeCommand(b[:n], false); ok != (n >= NVMeSQELen) {
			t.Errorf("command of %d bytes: ok %v", n, ok)
		}
		if _, ok := DecodeNVMeCompletion(b[:n]); ok != (n == NVMeCQELen) {
			t.Errorf("completion of %d bytes: ok %v", n, ok)
		}
		if _, ok := DecodeNVMeConnectData(b[:n]); ok {
			t.Errorf("connect data of %d bytes", n)
		}
		if _, ok := DecodeNVMeCMReq(b[:n]); ok != (n >= 10) {
			t.Errorf("CM REQ private data of %d bytes: ok %v", n, ok)
		}
	}
}

// FuzzDecodeNVMe decodes bytes as every NVMe-oF message: no panic, and
// every NVMe field of a packet carrying the result formats.
func FuzzDecodeNVMe(f *testing.F) {
	f.Add(mustHexF(nvmeReadHex), false, uint8(0))
	f.Add(mustHexF(nvmeCQEHex), true, uint8(1))
	f.Add(append(mustHexF(nvmeReadHex), make([]byte, 1024)...), true, uint8(2))
	f.Fuzz(func(t *testing.T, data []byte, admin bool, kind uint8) {
		var p Packet
		u := &ULPInfo{Proto: ULPNVMe, Msg: data}
		p.Analysis.Tracked = true
		p.Analysis.ULP = u
		n := &u.NVMe
		n.QID, n.HasQID = uint16(kind), kind&1 != 0
		if c, ok := DecodeNVMeCommand(data, admin); ok {
			n.Kind, n.Cmd = NVMeCmd, &c
			if kind&4 != 0 {
				n.Kind = NVMeData
			}
			if d, ok := DecodeNVMeConnectData(c.Data); ok {
				n.Connect = &d
			}
		}
		if q, ok := DecodeNVMeCompletion(data); ok {
			n.Kind, n.CQE = NVMeCQE, q
		}
		_, _ = DecodeNVMeCMReq(data)
		n.Link = NVMeLink{Linked: kind&2 != 0, CmdFrame: 1, DataFrames: []int{2, 3}, HasOffset: true}
		var out []byte
		for _, fl := range Fields() {
			for _, v := range fl.Values(&p, nil) {
				out = fl.AppendDisplay(out[:0], v)
			}
		}
		_ = n.Summary()
	})
}

func mustHexF(s string) []byte {
	b, err := hex.DecodeString(s)
	if err != nil {
		panic(err)
	}
	return b
}
