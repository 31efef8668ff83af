package decode_test

import (
	"bufio"
	"bytes"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/rocetap/rocetap/decode"
	"github.com/rocetap/rocetap/internal/testcap"
)

// tsharkOpcodeNames returns Wireshark's names of the BTH opcodes
// (tshark -G values: "Reliable Connection (RC) - SEND First", ...).
func tsharkOpcodeNames(t *testing.T) map[decode.Opcode]string {
	t.Helper()
	out, err := exec.Command("tshark", "-G", "values").Output()
	if err != nil {
		testcap.OracleMissing(t, fmt.Sprintf("tshark -G values: %v", err), testcap.InstallTshark)
	}
	names := map[decode.Opcode]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.Split(sc.Text(), "\t")
		if len(f) == 4 && f[0] == "V" && f[1] == "infiniband.bth.opcode" {
			v, err := strconv.Atoi(f[2])
			if err != nil || v > 255 {
				t.Fatalf("tshark -G values: %q", sc.Text())
			}
			names[decode.Opcode(v)] = f[3]
		}
	}
	if len(names) < 80 {
		t.Fatalf("tshark -G values lists %d BTH opcodes", len(names))
	}
	return names
}

// propsFromName derives an opcode's properties from Wireshark's name for
// it, independently of rocetap's table.
func propsFromName(name string) decode.OpProp {
	_, op, _ := strings.Cut(name, " - ")
	if name == "CNP" {
		return decode.PropCNP
	}
	has := func(s string) bool { return strings.Contains(op, s) }
	var p decode.OpProp
	switch {
	case has("READ response"):
		p |= decode.PropReadResp | decode.PropResponse | decode.PropPayload
	case has("ATOMIC Acknowledge"):
		p |= decode.PropAtomicAck | decode.PropResponse
	case has("Acknowledge"):
		p |= decode.PropAck | decode.PropResponse
	case has("SEND"):
		p |= decode.PropSend | decode.PropRequest | decode.PropPayload
	case has("RDMA WRITE"):
		p |= decode.PropWrite | decode.PropRequest | decode.PropPayload
	case has("READ Request"):
		p |= decode.PropRead | decode.PropRequest
	case has("CmpSwap"), has("FetchAdd"):
		p |= decode.PropAtomic | decode.PropRequest
	case has("RESYNC"):
		p |= decode.PropResync | decode.PropRequest
	}
	switch {
	case has("First"):
		p |= decode.PropStart
	case has("Middle"):
		p |= decode.PropMiddle
	case has("Last"):
		p |= decode.PropEnd
	default: // Only, or an operation of one packet
		p |= decode.PropOnly
	}
	if has("Immediate") {
		p |= decode.PropImm
	}
	if has("Invalidate") {
		p |= decode.PropInv
	}
	return p
}

// TestOpcodePropsAgreeWithWireshark checks the opcode table against
// Wireshark's names of every opcode: what each is (position in its
// message, operation, immediate, invalidate, request or response) must be
// what its name says. Opcodes Wireshark calls Reserved or does not list
// must be unknown to rocetap too, except FLUSH and ATOMIC WRITE (IBA 1.5,
// newer than Wireshark 4.0) and the CNP, which Wireshark 4.0 lists as 0x80
// where RoCEv2 (IBA Annex A17.9.2) gives 0x81 (README's differences table).
func TestOpcodePropsAgreeWithWireshark(t *testing.T) {
	names := tsharkOpcodeNames(t)
	newer := map[decode.Opcode]bool{0x1C: true, 0x1D: true, 0xBC: true, 0xBD: true, decode.CNP: true}
	delete(names, 0x80) // Wireshark's "CNP"
	checked := 0
	for v := range 256 {
		op := decode.Opcode(v)
		name, ok := names[op]
		if !ok || strings.HasSuffix(name, "- Reserved") {
			if op.Known() && !newer[op] {
				t.Errorf("%#02x: rocetap knows %q, Wireshark does not", v, op)
			}
			continue
		}
		if !op.Known() {
			t.Errorf("%#02x: Wireshark knows %q, rocetap does not", v, name)
			continue
		}
		if got, want := op.Props(), propsFromName(name); got != want {
			t.Errorf("%#02x %q: props %#x, want %#x from its name", v, name, got, want)
		}
		checked++
	}
	if checked < 80 {
		t.Fatalf("only %d opcodes checked", checked)
	}
}

// TestOpcodeProps pins the properties the rest of rocetap asks most.
func TestOpcodeProps(t *testing.T) {
	rc, uc, ud, xrc := decode.TransportRC, decode.TransportUC, decode.TransportUD, decode.TransportXRC
	tests := []struct {
		op       decode.Opcode
		is       decode.OpProp
		isNot    decode.OpProp
		kind     decode.MsgKind
		request  bool
		response bool
	}{
		{rc.Opcode(decode.OpSendFirst), decode.PropSend | decode.PropStart, decode.PropEnd | decode.PropMiddle, decode.MsgSend, true, false},
		{rc.Opcode(decode.OpSendLastImm), decode.PropSend | decode.PropEnd | decode.PropImm, decode.PropStart, decode.MsgSendImm, true, false},
		{rc.Opcode(decode.OpSendOnlyInv), decode.PropSend | decode.PropOnly | decode.PropInv, decode.PropImm, decode.MsgSendInv, true, false},
		{uc.Opcode(decode.OpWriteMiddle), decode.PropWrite | decode.PropMiddle, decode.PropStart | decode.PropEnd, decode.MsgWrite, true, false},
		{xrc.Opcode(decode.OpWriteOnlyImm), decode.PropWrite | decode.PropOnly | decode.PropImm, 0, decode.MsgWriteImm, true, false},
		{rc.Opcode(decode.OpReadRequest), decode.PropRead | decode.PropOnly, decode.PropPayload, decode.MsgRead, true, false},
		{rc.Opcode(decode.OpReadResponseMiddle), decode.PropReadResp | decode.PropMiddle | decode.PropPayload, decode.PropRequest, decode.MsgOther, false, true},
		{rc.Opcode(decode.OpAcknowledge), decode.PropAck | decode.PropResponse, decode.PropPayload | decode.PropAtomicAck, decode.MsgOther, false, true},
		{rc.Opcode(decode.OpAtomicAcknowledge), decode.PropAtomicAck, decode.PropAck, decode.MsgOther, false, true},
		{rc.Opcode(decode.OpFetchAdd), decode.PropAtomic | decode.PropOnly, decode.PropPayload, decode.MsgAtomic, true, false},
		{ud.Opcode(decode.OpSendOnlyImm), decode.PropSend | decode.PropOnly | decode.PropImm, 0, decode.MsgSendImm, true, false},
		{rc.Opcode(decode.OpFlush), decode.PropFlush | decode.PropOnly, decode.PropPayload, decode.MsgOther, true, false},
		{decode.CNP, decode.PropCNP, decode.PropRequest | decode.PropResponse, decode.MsgOther, false, false},
		{uc.Opcode(decode.OpReadRequest), 0, ^decode.OpProp(0), decode.MsgOther, false, false}, // no READ on UC
		{0x1A, 0, ^decode.OpProp(0), decode.MsgOther, false, false},                            // reserved
	}
	for _, tt := range tests {
		if !tt.op.Is(tt.is) || tt.op.IsAny(tt.isNot) {
			t.Errorf("%v: props %#x, want all of %#x and none of %#x", tt.op, tt.op.Props(), tt.is, tt.isNot)
		}
		if k := tt.op.MsgKind(); k != tt.kind {
			t.Errorf("%v: MsgKind %v, want %v", tt.op, k, tt.kind)
		}
		if tt.op.IsRequest() != tt.request || tt.op.IsResponse() != tt.response {
			t.Errorf("%v: request %v response %v", tt.op, tt.op.IsRequest(), tt.op.IsResponse())
		}
	}
}

func TestPSN(t *testing.T) {
	tests := []struct {
		a, b decode.PSN
		diff int32
	}{
		{5, 3, 2}, {3, 5, -2}, {0, 0xFFFFFF, 1}, {0xFFFFFF, 0, -1},
		{0x7FFFFF, 0, 0x7FFFFF}, {0x800000, 0, -0x800000}, {0, 0x800000, -0x800000},
	}
	for _, tt := range tests {
		if d := tt.a.Diff(tt.b); d != tt.diff {
			t.Errorf("%#x.Diff(%#x) = %d, want %d", tt.a, tt.b, d, tt.diff)
		}
		if tt.a.Before(tt.b) != (tt.diff < 0) || tt.a.After(tt.b) != (tt.diff > 0) {
			t.Errorf("%#x vs %#x: Before %v After %v, diff %d", tt.a, tt.b, tt.a.Before(tt.b), tt.a.After(tt.b), tt.diff)
		}
	}
	if got := decode.PSN(0xFFFFFE).Add(3); got != 1 {
		t.Errorf("0xfffffe + 3 = %#x, want 1", got)
	}
	if got := decode.PSN(1).Add(-3); got != 0xFFFFFE {
		t.Errorf("1 - 3 = %#x, want 0xfffffe", got)
	}
	if got := decode.PSN(0xFFFFFF).Next(); got != 0 {
		t.Errorf("0xffffff.Next() = %#x", got)
	}
	if got := decode.PSN(2).Dist(0xFFFFFE); got != 4 {
		t.Errorf("Dist over the wrap = %d, want 4", got)
	}
	if !decode.PSN(1).In(0xFFFFFE, 3) || decode.PSN(4).In(0xFFFFFE, 3) || !decode.PSN(0xFFFFFE).In(0xFFFFFE, 0xFFFFFE) {
		t.Error("In across the wrap")
	}
	if !decode.PSN(0).InWindow(0xFFFFF0, 0x10) || decode.PSN(0x10).InWindow(0xFFFFF0, 0x10) || decode.PSN(0xFFFFEF).InWindow(0xFFFFF0, 0x10) {
		t.Error("InWindow across the wrap")
	}
}

func TestInMessage(t *testing.T) {
	rc, uc, xrc := decode.TransportRC, decode.TransportUC, decode.TransportXRC
	tests := []struct {
		op   decode.Opcode
		i, n int
		want decode.Opcode
	}{
		{rc.Opcode(decode.OpSendMiddle), 0, 3, rc.Opcode(decode.OpSendFirst)},
		{rc.Opcode(decode.OpSendFirst), 1, 3, rc.Opcode(decode.OpSendMiddle)},
		{rc.Opcode(decode.OpSendLastImm), 2, 3, rc.Opcode(decode.OpSendLast)},
		{rc.Opcode(decode.OpSendFirst), 0, 1, rc.Opcode(decode.OpSendOnly)},
		{uc.Opcode(decode.OpWriteFirst), 4, 5, uc.Opcode(decode.OpWriteLast)},
		{xrc.Opcode(decode.OpWriteOnly), 0, 2, xrc.Opcode(decode.OpWriteFirst)},
		{rc.Opcode(decode.OpReadResponseFirst), 0, 1, rc.Opcode(decode.OpReadResponseOnly)},
		{rc.Opcode(decode.OpReadResponseFirst), 1, 9, rc.Opcode(decode.OpReadResponseMiddle)},
		{rc.Opcode(decode.OpReadResponseFirst), 8, 9, rc.Opcode(decode.OpReadResponseLast)},
		{rc.Opcode(decode.OpAcknowledge), 0, 3, rc.Opcode(decode.OpAcknowledge)},
		{decode.TransportUD.Opcode(decode.OpSendOnlyImm), 0, 1, decode.TransportUD.Opcode(decode.OpSendOnly)},
		{decode.TransportUD.Opcode(decode.OpSendOnly), 0, 3, decode.TransportUD.Opcode(decode.OpSendOnly)}, // UD has no FIRST
	}
	for _, tt := range tests {
		if got := tt.op.InMessage(tt.i, tt.n); got != tt.want {
			t.Errorf("%v.InMessage(%d, %d) = %v, want %v", tt.op, tt.i, tt.n, got, tt.want)
		}
	}
}
