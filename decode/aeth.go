package decode

import (
	"strconv"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
)

// AETHLen is the length of the ACK Extended Transport Header.
const AETHLen = 4

// AETH is the ACK Extended Transport Header (IBA 9.3.5), carried by ACKs,
// ATOMIC ACKs and READ Response First/Last/Only.
//
//	+---------------+-----------------------------------------------+
//	| Syndrome (8)  |          Message Sequence Number (24)         |
//	+---------------+-----------------------------------------------+
//
// Syndrome bits 6:5 select ACK (00), RNR NAK (01) or NAK (11); bits 4:0 are
// the credit count, the RNR timer code or the NAK code.
type AETH struct {
	layers.BaseLayer
	nextLayer
	Syndrome uint8
	MSN      uint32
}

// AETH syndrome kinds (Syndrome >> 5 & 3).
const (
	AETHAck      = 0
	AETHRNRNak   = 1
	AETHReserved = 2
	AETHNak      = 3
)

// NAK codes (Syndrome & 0x1F when Kind() == AETHNak).
const (
	NakPSNSequenceError  = 0
	NakInvalidRequest    = 1
	NakRemoteAccessError = 2
	NakRemoteOperational = 3
	NakInvalidRDRequest  = 4
)

func (h *AETH) LayerType() gopacket.LayerType  { return LayerTypeAETH }
func (h *AETH) CanDecode() gopacket.LayerClass { return LayerTypeAETH }

// DecodeFromBytes decodes an AETH at the start of data.
func (h *AETH) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	if len(data) < AETHLen {
		df.SetTruncated()
		return truncated("aeth", AETHLen, len(data))
	}
	h.Syndrome = data[0]
	h.MSN = get24(data[1:])
	h.Contents, h.Payload = data[:AETHLen], data[AETHLen:]
	return nil
}

// SerializeTo prepends the AETH.
func (h *AETH) SerializeTo(b gopacket.SerializeBuffer, _ gopacket.SerializeOptions) error {
	d, err := b.PrependBytes(AETHLen)
	if err != nil {
		return err
	}
	d[0] = h.Syndrome
	put24(d[1:], h.MSN)
	return nil
}

// Kind returns the syndrome kind: AETHAck, AETHRNRNak, AETHReserved or AETHNak.
func (h *AETH) Kind() uint8 { return h.Syndrome >> 5 & 3 }

// Value returns the low five syndrome bits: credit count, RNR timer or NAK code.
func (h *AETH) Value() uint8 { return h.Syndrome & 0x1F }

// creditCounts maps the ACK credit code to the number of credits; 31 means
// invalid/unlimited.
var creditCounts = [31]uint16{0, 1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512, 768, 1024, 1536, 2048, 3072, 4096, 6144, 8192, 12288, 16384, 24576, 32768}

// rnrTimerMicros maps the RNR NAK timer code to microseconds (code 0 is 655.36 ms).
var rnrTimerMicros = [32]uint32{655360, 10, 20, 30, 40, 60, 80, 120, 160, 240, 320, 480, 640, 960, 1280, 1920, 2560, 3840, 5120, 7680, 10240, 15360, 20480, 30720, 40960, 61440, 81920, 122880, 163840, 245760, 327680, 491520}

// Credits returns the number of credits an ACK syndrome advertises and
// whether it is limited (code 31 means unlimited/invalid).
func (h *AETH) Credits() (n int, limited bool) {
	c := h.Value()
	if c == 31 {
		return 0, false
	}
	return int(creditCounts[c]), true
}

// RNRTimerMicros returns the RNR NAK timer in microseconds.
func RNRTimerMicros(code uint8) uint32 { return rnrTimerMicros[code&0x1F] }

var nakNames = [5]string{"PSN Sequence Error", "Invalid Request", "Remote Access Error", "Remote Operational Error", "Invalid RD Request"}

// SyndromeString describes an AETH syndrome, e.g. "ACK (credits=31)",
// "RNR NAK (timer=14: 1.92 ms)", "NAK Remote Access Error".
func SyndromeString(s uint8) string { return syndromeNames[s] }

// syndromeNames are the 256 syndromes' strings, made once: the Info
// column shows one on every ACK, and making it there was an allocation
// per packet.
var syndromeNames = func() (names [256]string) {
	for s := range names {
		names[s] = syndromeString(uint8(s))
	}
	return names
}()

func syndromeString(s uint8) string {
	v := s & 0x1F
	switch s >> 5 & 3 {
	case AETHAck:
		if v == 31 {
			return "ACK (credits=unlimited)"
		}
		return "ACK (credits=" + strconv.Itoa(int(creditCounts[v])) + ")"
	case AETHRNRNak:
		us := rnrTimerMicros[v]
		return "RNR NAK (timer=" + strconv.Itoa(int(v)) + ": " + strconv.FormatFloat(float64(us)/1000, 'f', -1, 64) + " ms)"
	case AETHNak:
		if int(v) < len(nakNames) {
			return "NAK " + nakNames[v]
		}
		return "NAK Reserved (" + strconv.Itoa(int(v)) + ")"
	}
	return "Reserved (0x" + strconv.FormatUint(uint64(s), 16) + ")"
}

// registerAETHFields registers the AETH fields.
func registerAETHFields(ib *Field) {
	ack := hdrField("infiniband.aeth", "ACK Extended Transport Header", FTBytes, HdrAETH, func(p *Packet) []byte { return p.AETH.Contents })
	ack.Parent = ib
	syn := uintField(ack, "infiniband.aeth.syndrome", "Syndrome", FTUint8, BaseDec, 0, 0, 1, func(p *Packet) uint64 { return uint64(p.AETH.Syndrome) })
	syn.names = func(v uint64) string { return SyndromeString(uint8(v)) }
	uintField(ack, "infiniband.aeth.syndrome.reserved", "Reserved", FTUint8, BaseDec, 0x80, 0, 1, func(p *Packet) uint64 { return uint64(p.AETH.Syndrome >> 7) })
	kind := uintField(ack, "infiniband.aeth.syndrome.opcode", "OpCode", FTUint8, BaseDec, 0x60, 0, 1, func(p *Packet) uint64 { return uint64(p.AETH.Kind()) })
	kind.names = func(v uint64) string { return [4]string{"Acknowledge", "RNR NAK", "Reserved", "NAK"}[v&3] }
	isKind := func(k uint8) func(*Packet) bool { return func(p *Packet) bool { return p.AETH.Kind() == k } }
	low := func(p *Packet) uint64 { return uint64(p.AETH.Value()) }
	condUint(ack, "infiniband.aeth.syndrome.credit_count", "Credit Count", FTUint8, BaseDec, 0x1f, 0, 1, isKind(AETHAck), low)
	condUint(ack, "infiniband.aeth.syndrome.timer", "Timer", FTUint8, BaseDec, 0x1f, 0, 1, isKind(AETHRNRNak), low)
	condUint(ack, "infiniband.aeth.syndrome.reserved_value", "Reserved (Invalid Opcode)", FTUint8, BaseDec, 0x1f, 0, 1, isKind(AETHReserved), low)
	ec := condUint(ack, "infiniband.aeth.syndrome.error_code", "Error Code", FTUint8, BaseDec, 0x1f, 0, 1, isKind(AETHNak), low)
	ec.names = func(v uint64) string {
		if v < uint64(len(nakNames)) {
			return nakNames[v]
		}
		return ""
	}
	uintField(ack, "infiniband.aeth.msn", "Message Sequence Number", FTUint24, BaseDec, 0, 1, 3, func(p *Packet) uint64 { return uint64(p.AETH.MSN) })
}
