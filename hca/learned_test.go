package hca

// Memory the model learned from responses is an expectation, not a fact
// (IBTA-NOTES "More spec facts": bytes of a registered buffer can change
// between two remote READs without anything on the wire). These tests pin
// the three kinds of byte the model keeps: unknown, written by a request
// of the capture (a fact), learned from a response (an expectation).

import (
	"bytes"
	"errors"
	"slices"
	"testing"

	"github.com/rocetap/rocetap/decode"
)

// TestMemLearn: MTT.Learn fills unknown bytes and replaces learned ones,
// never written ones; ReadState tells them apart; a write makes learned
// bytes written; clearing forgets both.
func TestMemLearn(t *testing.T) {
	const va = 0x10100
	mtt := testMTT(t)
	if err := mtt.Write(va+4, []byte("WW")); err != nil {
		t.Fatal(err)
	}
	if err := mtt.Learn(va, []byte("abcdefgh")); err != nil {
		t.Fatal(err)
	}
	read := func() (string, []bool, []bool, int, int) {
		data, known, learned := make([]byte, 10), make([]bool, 10), make([]bool, 10)
		nk, nl, err := mtt.ReadState(va, data, known, learned)
		if err != nil {
			t.Fatal(err)
		}
		return string(data), known, learned, nk, nl
	}
	T, F := true, false
	data, known, learned, nk, nl := read()
	if data != "abcdWWgh\x00\x00" || !slices.Equal(known, []bool{T, T, T, T, T, T, T, T, F, F}) ||
		!slices.Equal(learned, []bool{T, T, T, T, F, F, T, T, F, F}) || nk != 8 || nl != 6 {
		t.Fatalf("after Learn over a write: %q known %v learned %v (%d, %d)", data, known, learned, nk, nl)
	}
	// Learning again replaces what was learned, keeps what was written.
	if err := mtt.Learn(va, []byte("ABCDEFGHIJ")); err != nil {
		t.Fatal(err)
	}
	if data, _, learned, nk, nl = read(); data != "ABCDWWGHIJ" || nk != 10 || nl != 8 || learned[4] || !learned[9] {
		t.Fatalf("after a second Learn: %q learned %v (%d, %d)", data, learned, nk, nl)
	}
	// A write makes the bytes a fact.
	if err := mtt.Write(va, []byte("xy")); err != nil {
		t.Fatal(err)
	}
	if data, _, learned, _, nl = read(); data != "xyCDWWGHIJ" || learned[0] || learned[1] || !learned[2] || nl != 6 {
		t.Fatalf("after a write over learned bytes: %q learned %v (%d)", data, learned, nl)
	}
	// Read (without the learned mask) still counts every known byte.
	if n, err := mtt.Read(va, make([]byte, 10), nil); n != 10 || err != nil {
		t.Fatalf("Read: %d known, %v", n, err)
	}
	if err := mtt.Learn(0x130fc, make([]byte, 8)); !errors.Is(err, ErrMTTRange) {
		t.Fatalf("Learn past the end: %v", err)
	}
	mtt.mem.clearPA(mustPA(t, mtt, va), 10)
	if _, _, _, nk, nl = read(); nk != 0 || nl != 0 {
		t.Fatalf("after clearing: %d known, %d learned", nk, nl)
	}
}

func mustPA(t *testing.T, mtt *MTT, va uint64) uint64 {
	t.Helper()
	pa, ok := mtt.Translate(va)
	if !ok {
		t.Fatalf("no translation for %#x", va)
	}
	return pa
}

// observeRead shows the model a READ RESPONSE Only of QP 0x11 (whose
// peer is QP 0x99) with the PSN and data.
func observeRead(m *Model, psn uint32, data []byte) {
	var p decode.Packet
	p.Has = decode.HdrBTH | decode.HdrAETH
	p.BTH = decode.BTH{Opcode: decode.OpReadResponseOnly, DestQP: 0x99, PSN: decode.PSN(psn)}
	p.AETH.Syndrome = synACK
	p.Payload = data
	m.Observe(&p)
}

func observeAtomic(m *Model, psn uint32, orig uint64) {
	var p decode.Packet
	p.Has = decode.HdrBTH | decode.HdrAETH | decode.HdrAtomicAckETH
	p.BTH = decode.BTH{Opcode: decode.OpAtomicAcknowledge, DestQP: 0x99, PSN: decode.PSN(psn)}
	p.AtomicAckETH.OrigRemData = orig
	m.Observe(&p)
}

// TestObserveLearnedIsAnExpectation: what a READ response showed is
// expected again, marked learned; a later READ response that shows other
// bytes replaces it (rping rewrites its buffer between two READs); bytes a
// WRITE of the capture stored are never replaced.
func TestObserveLearnedIsAnExpectation(t *testing.T) {
	m := newTestModel(t, ProfileIBTA, nil)
	const va = mrVA + 2000
	m.feed(req{op: decode.OpWriteOnly, psn: 100, va: va + 4, rkey: mrKey, dmaLen: 2, payload: []byte("WW"), pad: 2})
	m.feed(req{op: decode.OpReadRequest, psn: 101, va: va, rkey: mrKey, dmaLen: 8})
	observeRead(m, 101, []byte("rdma-0ab"))

	r := m.feed(req{op: decode.OpReadRequest, psn: 102, va: va, rkey: mrKey, dmaLen: 8})
	x := r.Responses[0]
	T, F := true, false
	if string(x.Payload) != "rdmaWWab" || !slices.Equal(x.Learned, []bool{T, T, T, T, F, F, T, T}) {
		t.Fatalf("READ after Observe: %q learned %v; want the WRITE's bytes written, the rest learned", x.Payload, x.Learned)
	}
	if x.AllLearned {
		t.Error("AllLearned on a READ of written and learned bytes")
	}
	// A READ of learned bytes only: the shared all-true mask.
	y := m.feed(req{op: decode.OpReadRequest, psn: 103, va: va, rkey: mrKey, dmaLen: 4}).Responses[0]
	if !y.AllLearned || !slices.Equal(y.Learned, []bool{T, T, T, T}) {
		t.Fatalf("READ of learned bytes only: AllLearned %v, learned %v", y.AllLearned, y.Learned)
	}
	// The responder's CPU wrote its buffer: the next READ response shows
	// new bytes, which replace the learned ones, not the written ones.
	observeRead(m, 102, []byte("RDMA-1CD"))
	x = m.feed(req{op: decode.OpReadRequest, psn: 104, va: va, rkey: mrKey, dmaLen: 8}).Responses[0]
	if string(x.Payload) != "RDMAWWCD" {
		t.Fatalf("READ after a second Observe: %q, want the new learned bytes around the written ones", x.Payload)
	}
	// A WRITE makes bytes a fact: no Learned mask when all are written.
	m.feed(req{op: decode.OpWriteOnly, psn: 105, va: va, rkey: mrKey, dmaLen: 8, payload: []byte("12345678")})
	x = m.feed(req{op: decode.OpReadRequest, psn: 106, va: va, rkey: mrKey, dmaLen: 8}).Responses[0]
	if string(x.Payload) != "12345678" || x.Learned != nil {
		t.Fatalf("READ after a WRITE: %q learned %v", x.Payload, x.Learned)
	}
	// A READ of memory written only: no Learned mask at all.
	x = m.feed(req{op: decode.OpReadRequest, psn: 107, va: va + 4, rkey: mrKey, dmaLen: 2}).Responses[0]
	if x.Learned != nil {
		t.Fatalf("READ of written bytes: learned %v", x.Learned)
	}
}

// TestObserveAtomicLearned: an ATOMIC on learned memory answers a learned
// original value; its ACK then tells the model the real one, and what the
// ATOMIC wrote is a fact, what a failed compare only showed is learned.
func TestObserveAtomicLearned(t *testing.T) {
	m := newTestModel(t, ProfileIBTA, nil)
	const va = mrVA + 64
	m.feed(req{op: decode.OpReadRequest, psn: 100, va: va, rkey: mrKey, dmaLen: 8})
	observeRead(m, 100, []byte{10, 0, 0, 0, 0, 0, 0, 0})
	x := m.feed(req{op: decode.OpFetchAdd, psn: 101, va: va, rkey: mrKey, swap: 3}).Responses[0]
	if !x.AtomicKnown || !x.AtomicLearned || x.AtomicOrig != 10 {
		t.Fatalf("FETCH_ADD on learned memory: %+v, want the learned original value 10", x)
	}
	// The responder's memory held 20: FETCH_ADD left 23, written by the
	// capture's ATOMIC.
	observeAtomic(m, 101, 20)
	x = m.feed(req{op: decode.OpCompareSwap, psn: 102, va: va, rkey: mrKey, cmp: 99, swap: 5}).Responses[0]
	if !x.AtomicKnown || x.AtomicLearned || x.AtomicOrig != 23 {
		t.Fatalf("after the FETCH_ADD's ACK showed 20: %+v, want the written original value 23", x)
	}
	// A compare that fails only shows the value: on unknown memory the
	// model learns it, not more.
	const va2 = mrVA + 128
	m.feed(req{op: decode.OpCompareSwap, psn: 103, va: va2, rkey: mrKey, cmp: 1, swap: 2})
	observeAtomic(m, 103, 7)
	x = m.feed(req{op: decode.OpFetchAdd, psn: 104, va: va2, rkey: mrKey, swap: 1}).Responses[0]
	if !x.AtomicKnown || !x.AtomicLearned || x.AtomicOrig != 7 {
		t.Fatalf("after a failed CMP_SWAP showed 7: %+v, want the learned value 7", x)
	}
	// A duplicate of that FETCH_ADD answers the saved value, learned.
	if d := m.feed(req{op: decode.OpFetchAdd, psn: 104, va: va2, rkey: mrKey, swap: 1}).Responses; len(d) != 1 || !d[0].AtomicLearned || !d[0].Duplicate {
		t.Fatalf("duplicate: %+v", d)
	}
}

// TestReadSeriesLearned: a READ answered as a ReadSeries says which bytes
// are learned exactly as the listed responses do.
func TestReadSeriesLearned(t *testing.T) {
	run := func(seriesAt int) (data []byte, learned []bool) {
		m, err := NewModel(testConfig(), Options{ReadSeriesAt: seriesAt})
		if err != nil {
			t.Fatal(err)
		}
		m.feed(req{op: decode.OpWriteOnly, psn: 100, ack: true, va: mrVA + 1020, rkey: mrKey, dmaLen: 8, payload: []byte("written!")})
		m.feed(req{op: decode.OpReadRequest, psn: 101, va: mrVA + 4090, rkey: mrKey, dmaLen: 12})
		observeRead(m, 101, []byte("learned-over"))
		r := m.feed(req{op: decode.OpReadRequest, psn: 102, va: mrVA, rkey: mrKey, dmaLen: 5000})
		for _, x := range r.Responses {
			if x.Series == nil {
				data = append(data, x.Payload...)
				l := x.Learned
				if l == nil {
					l = make([]bool, len(x.Payload))
				}
				learned = append(learned, l...)
				continue
			}
			s := x.Series
			for i := uint32(0); i < s.Count; i++ {
				_, _, off, n := s.Response(i)
				d, k, l := make([]byte, n), make([]bool, n), make([]bool, n)
				s.Fill(off, d, k)
				if s.FillLearned(off, l) != slices.Contains(l, true) {
					t.Fatalf("FillLearned of response %d says otherwise than its mask", i)
				}
				data, learned = append(data, d...), append(learned, l...)
			}
		}
		return data, learned
	}
	listedData, listedLearned := run(0)
	seriesData, seriesLearned := run(1)
	if !bytes.Equal(listedData, seriesData) || !slices.Equal(listedLearned, seriesLearned) {
		t.Fatal("the series and the listed responses differ")
	}
	n := 0
	for i, l := range listedLearned {
		if l {
			n++
			if i < 4090 || i >= 4102 {
				t.Errorf("byte %d learned", i)
			}
		}
	}
	if n != 12 || string(listedData[4090:4102]) != "learned-over" || string(listedData[1020:1028]) != "written!" {
		t.Fatalf("%d learned bytes: %q", n, listedData[4088:4104])
	}
}

// TestBitHelpers checks setBits, clearBits and countBits, which work a
// word at a time, against bit-by-bit references on every range of 3
// words' bits.
func TestBitHelpers(t *testing.T) {
	const nbits = 192
	pattern := [3]uint64{0xF0F0_0FF0_1234_8001, 0x8000_0000_0000_0001, 0xFFFF_0000_FFFF_0000}
	bit := func(w []uint64, i uint64) bool { return w[i>>6]>>(i&63)&1 != 0 }
	for lo := uint64(0); lo <= nbits; lo++ {
		for hi := lo; hi <= nbits; hi++ {
			set, clr := pattern, pattern
			setBits(set[:], lo, hi)
			clearBits(clr[:], lo, hi)
			want := 0
			for i := uint64(0); i < nbits; i++ {
				in := i >= lo && i < hi
				if bit(set[:], i) != (in || bit(pattern[:], i)) || bit(clr[:], i) != (!in && bit(pattern[:], i)) {
					t.Fatalf("[%d, %d): bit %d set %v clear %v", lo, hi, i, bit(set[:], i), bit(clr[:], i))
				}
				if in && bit(pattern[:], i) {
					want++
				}
			}
			if n := countBits(pattern[:], lo, hi); n != want {
				t.Fatalf("countBits [%d, %d) = %d, want %d", lo, hi, n, want)
			}
		}
	}
	// wordSpan: the 64-byte words of a chunk's bytes [lo, hi).
	for lo := uint64(0); lo < storeSize; lo += 61 {
		for hi := lo + 1; hi <= storeSize; hi += 67 {
			var want uint64
			for b := lo; b < hi; b++ {
				want |= 1 << (b >> 6)
			}
			if got := wordSpan(lo, hi); got != want {
				t.Fatalf("wordSpan(%d, %d) = %#x, want %#x", lo, hi, got, want)
			}
		}
	}
	if wordSpan(0, storeSize) != ^uint64(0) || wordSpan(4095, 4096) != 1<<63 {
		t.Fatal("wordSpan of the whole chunk or its last byte")
	}
}

// TestLearnedSummary: the chunk's summary of words that may hold learned
// bytes follows Learn and Write, so reads and writes elsewhere in the
// chunk never look at the learned bits.
func TestLearnedSummary(t *testing.T) {
	mtt := testMTT(t)
	const va = 0x10100
	ref := func() chunkRef {
		pa, _ := mtt.Translate(va)
		return mtt.mem.chunks[pa>>storeShift]
	}
	if err := mtt.Write(va, make([]byte, 64)); err != nil {
		t.Fatal(err)
	}
	if r := ref(); r.learned != nil || r.sum != 0 {
		t.Fatalf("written only: %+v", r)
	}
	if err := mtt.Learn(va+64, bytes.Repeat([]byte{7}, 128)); err != nil {
		t.Fatal(err)
	}
	pa, _ := mtt.Translate(va)
	first := (pa & storeMask) >> 6
	if r := ref(); r.sum != 3<<(first+1) {
		t.Fatalf("learned 2 words: sum %#x, want %#x", r.sum, uint64(3)<<(first+1))
	}
	// Writing one of the two words makes it a fact: its bit goes.
	if err := mtt.Write(va+64, make([]byte, 64)); err != nil {
		t.Fatal(err)
	}
	if r := ref(); r.sum != 1<<(first+2) {
		t.Fatalf("one learned word left: sum %#x", r.sum)
	}
	if _, nl, _ := mtt.ReadState(va, make([]byte, 256), nil, nil); nl != 64 {
		t.Fatalf("%d learned bytes, want 64", nl)
	}
}
