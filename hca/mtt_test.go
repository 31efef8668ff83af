package hca

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"slices"
	"testing"
)

func newMem(t *testing.T, pageSize, seed uint64) *PhysMem {
	t.Helper()
	m, err := NewPhysMem(pageSize, seed)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func register(t *testing.T, m *PhysMem, va, length uint64, access Access) *MTT {
	t.Helper()
	mtt, err := m.Register(va, length, access)
	if err != nil {
		t.Fatal(err)
	}
	return mtt
}

// fixedMTT returns an MTT of [va, va+length) over the given physical frames
// (one per page), with 4 KiB pages, so tests know every address.
func fixedMTT(t *testing.T, va, length uint64, frames ...uint64) *MTT {
	t.Helper()
	m := newMem(t, 4096, 0)
	mtt := &MTT{mem: m, va: va, length: length, shift: 12}
	first := va >> 12
	if last := (va + length - 1) >> 12; last-first+1 != uint64(len(frames)) {
		t.Fatalf("fixedMTT: %d frames for %d pages", len(frames), last-first+1)
	}
	var runs []PageRun
	for i, f := range frames {
		runs = appendFrame(runs, (first+uint64(i))<<12, f<<12, 4096)
	}
	mtt.setRuns(runs)
	return mtt
}

func TestMTTNewPhysMemPageSize(t *testing.T) {
	tests := []struct {
		pageSize, want uint64
		wantErr        bool
	}{
		{0, DefaultPageSize, false},
		{4096, 4096, false},
		{64, 64, false},
		{1 << 21, 1 << 21, false},
		{1 << 30, 1 << 30, false},
		{32, 0, true},
		{4095, 0, true},
		{6144, 0, true},
		{1 << 31, 0, true},
	}
	for _, tt := range tests {
		m, err := NewPhysMem(tt.pageSize, 1)
		if (err != nil) != tt.wantErr {
			t.Errorf("NewPhysMem(%d): err %v, want error %v", tt.pageSize, err, tt.wantErr)
			continue
		}
		if err == nil && m.PageSize() != tt.want {
			t.Errorf("NewPhysMem(%d).PageSize() = %d, want %d", tt.pageSize, m.PageSize(), tt.want)
		}
	}
}

type regSpec struct {
	va, length uint64
}

var placementScript = []regSpec{
	{0x1000, 64 << 12},
	{0x7f00_0000_1234, 10000},
	{0, 1},
	{0x20_0000, 300 << 12},
}

func placeAll(t *testing.T, seed uint64) [][]PageRun {
	m := newMem(t, 4096, seed)
	var out [][]PageRun
	for _, r := range placementScript {
		out = append(out, register(t, m, r.va, r.length, 0).Runs())
	}
	return out
}

func TestMTTPlacementDeterministic(t *testing.T) {
	a, b := placeAll(t, 7), placeAll(t, 7)
	for i := range a {
		if !slices.Equal(a[i], b[i]) {
			t.Errorf("registration %d: runs differ between two runs with seed 7:\n%v\n%v", i, a[i], b[i])
		}
	}
	c := placeAll(t, 8)
	if slices.Equal(a[0], c[0]) {
		t.Errorf("seeds 7 and 8 place the first MR identically: %v", a[0])
	}
}

// checkRuns checks the MTT invariants: runs cover the pages in virtual
// order, adjacent runs are not physically contiguous, and no frame is used
// twice (frames collects them over MTTs).
func checkRuns(t *testing.T, mtt *MTT, frames map[uint64]bool) {
	t.Helper()
	ps := mtt.PageSize()
	runs := mtt.Runs()
	va, pages := mtt.VA()&^(ps-1), uint64(0)
	for i, r := range runs {
		if r.VA != va {
			t.Fatalf("run %d at va %#x, want %#x", i, r.VA, va)
		}
		if r.Pages == 0 || r.PA%ps != 0 {
			t.Fatalf("run %d: %+v", i, r)
		}
		if i > 0 && runs[i-1].PA+runs[i-1].Pages*ps == r.PA {
			t.Fatalf("runs %d and %d are physically contiguous but not merged: %+v %+v", i-1, i, runs[i-1], r)
		}
		for p := range r.Pages {
			f := r.PA/ps + p
			if frames[f] {
				t.Fatalf("frame %#x used twice", f)
			}
			frames[f] = true
		}
		va += r.Pages * ps
		pages += r.Pages
	}
	if pages != mtt.Pages() {
		t.Fatalf("runs hold %d pages, MTT says %d", pages, mtt.Pages())
	}
}

func TestMTTScattered(t *testing.T) {
	for _, ps := range []uint64{4096, 64, 1 << 21} {
		m := newMem(t, ps, 42)
		frames := map[uint64]bool{}
		var merged, runs, pages uint64
		for i, n := range []uint64{64, 300, 1, 17, 1000} {
			mtt := register(t, m, uint64(i)<<40+ps/3, n*ps, 0)
			checkRuns(t, mtt, frames)
			for _, run := range mtt.Runs() {
				runs++
				if run.Pages > 1 {
					merged++
				}
			}
			pages += mtt.Pages()
		}
		// Mostly scattered, sometimes contiguous.
		if merged == 0 || runs < pages/2 {
			t.Errorf("page size %d: %d pages in %d runs, %d of them merged", ps, pages, runs, merged)
		}
		if m.PinnedPages() != pages {
			t.Errorf("page size %d: PinnedPages %d, want %d", ps, m.PinnedPages(), pages)
		}
	}
}

func TestMTTRunsMerge(t *testing.T) {
	const P = 4096
	tests := []struct {
		name   string
		va     uint64
		frames []uint64
		want   []PageRun
	}{
		{"one page", 0x10000, []uint64{7}, []PageRun{{0x10000, 7 * P, 1}}},
		{"all contiguous", 0x10000, []uint64{7, 8, 9}, []PageRun{{0x10000, 7 * P, 3}}},
		{"all scattered", 0x10000, []uint64{9, 3, 7}, []PageRun{{0x10000, 9 * P, 1}, {0x11000, 3 * P, 1}, {0x12000, 7 * P, 1}}},
		{"descending is not contiguous", 0, []uint64{5, 4}, []PageRun{{0, 5 * P, 1}, {P, 4 * P, 1}}},
		{"mixed", 0x10000, []uint64{5, 6, 7, 2, 3, 9},
			[]PageRun{{0x10000, 5 * P, 3}, {0x13000, 2 * P, 2}, {0x15000, 9 * P, 1}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mtt := fixedMTT(t, tt.va, uint64(len(tt.frames))*P, tt.frames...)
			if got := mtt.Runs(); !slices.Equal(got, tt.want) {
				t.Errorf("runs %v, want %v", got, tt.want)
			}
		})
	}
}

// testMTT maps [0x10100, 0x13100): pages 0x10000 and 0x11000 to frames 10
// and 11 (one run), 0x12000 to frame 5, 0x13000 to frame 20.
func testMTT(t *testing.T) *MTT {
	return fixedMTT(t, 0x10100, 3*4096, 10, 11, 5, 20)
}

func TestMTTTranslate(t *testing.T) {
	mtt := testMTT(t)
	tests := []struct {
		name   string
		va     uint64
		wantPA uint64
		wantOK bool
	}{
		{"first byte (unaligned va)", 0x10100, 10<<12 + 0x100, true},
		{"before the MR in its first page", 0x100ff, 0, false},
		{"last byte of page 0", 0x10fff, 10<<12 + 0xfff, true},
		{"first byte of page 1 (merged)", 0x11000, 11 << 12, true},
		{"last byte of page 1", 0x11fff, 11<<12 + 0xfff, true},
		{"first byte of page 2 (new run)", 0x12000, 5 << 12, true},
		{"middle of page 2", 0x12abc, 5<<12 + 0xabc, true},
		{"first byte of page 3", 0x13000, 20 << 12, true},
		{"last byte (length not a page multiple)", 0x130ff, 20<<12 + 0xff, true},
		{"one past the end, same page", 0x13100, 0, false},
		{"zero", 0, 0, false},
		{"max", math.MaxUint64, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pa, ok := mtt.Translate(tt.va)
			if pa != tt.wantPA || ok != tt.wantOK {
				t.Errorf("Translate(%#x) = %#x, %v; want %#x, %v", tt.va, pa, ok, tt.wantPA, tt.wantOK)
			}
		})
	}
}

func TestMTTRegisterPages(t *testing.T) {
	tests := []struct {
		va, length, pages uint64
	}{
		{0x1000, 4096, 1},
		{0x1001, 4096, 2},
		{0x1fff, 2, 2},
		{0x1fff, 1, 1},
		{0x1000, 1, 1},
		{0x1800, 8192, 3},
		{0x1000, 0, 0},
		{math.MaxUint64 - 4095, 4096, 1},
	}
	m := newMem(t, 4096, 3)
	for _, tt := range tests {
		mtt := register(t, m, tt.va, tt.length, 0)
		if mtt.Pages() != tt.pages {
			t.Errorf("Register(%#x, %d): %d pages, want %d", tt.va, tt.length, mtt.Pages(), tt.pages)
		}
		if tt.length == 0 {
			continue
		}
		// Every byte's offset within its page is kept.
		for _, va := range []uint64{tt.va, tt.va + tt.length - 1} {
			pa, ok := mtt.Translate(va)
			if !ok || pa%4096 != va%4096 {
				t.Errorf("Register(%#x, %d): Translate(%#x) = %#x, %v", tt.va, tt.length, va, pa, ok)
			}
		}
	}
}

func TestMTTRegisterErrors(t *testing.T) {
	tests := []struct {
		name       string
		va, length uint64
		access     Access
	}{
		{"zero-based at non-zero va", 0x1000, 4096, ZeroBased | RemoteRead},
		{"overflow", math.MaxUint64 - 10, 12, 0},
		{"larger than physical memory", 0, 1 << 60, 0},
	}
	m := newMem(t, 4096, 3)
	for _, tt := range tests {
		if _, err := m.Register(tt.va, tt.length, tt.access); err == nil {
			t.Errorf("%s: Register(%#x, %d, %v) succeeded", tt.name, tt.va, tt.length, tt.access)
		}
	}
	if m.PinnedPages() != 0 {
		t.Errorf("failed registrations pinned %d pages", m.PinnedPages())
	}
}

func TestMTTZeroBased(t *testing.T) {
	m := newMem(t, 4096, 3)
	mtt := register(t, m, 0, 10000, ZeroBased|RemoteWrite)
	if mtt.VA() != 0 || mtt.Len() != 10000 || mtt.Access() != ZeroBased|RemoteWrite || mtt.Pages() != 3 {
		t.Fatalf("MTT va %#x len %d access %v pages %d", mtt.VA(), mtt.Len(), mtt.Access(), mtt.Pages())
	}
	for _, tt := range []struct {
		va uint64
		ok bool
	}{{0, true}, {4095, true}, {4096, true}, {9999, true}, {10000, false}} {
		if pa, ok := mtt.Translate(tt.va); ok != tt.ok || ok && pa%4096 != tt.va%4096 {
			t.Errorf("Translate(%d) = %#x, %v; want ok %v", tt.va, pa, ok, tt.ok)
		}
	}
}

func TestMTTSegments(t *testing.T) {
	mtt := testMTT(t)
	tests := []struct {
		name       string
		va, length uint64
		want       []Segment
		wantErr    error
	}{
		{"whole MR", 0x10100, 3 * 4096, []Segment{
			{0x10100, 10<<12 + 0x100, 0x1f00},
			{0x12000, 5 << 12, 0x1000},
			{0x13000, 20 << 12, 0x100},
		}, nil},
		{"inside one page", 0x10200, 16, []Segment{{0x10200, 10<<12 + 0x200, 16}}, nil},
		{"across a merged page boundary", 0x10ff0, 0x20, []Segment{{0x10ff0, 10<<12 + 0xff0, 0x20}}, nil},
		{"across a run boundary", 0x11ff0, 0x20, []Segment{{0x11ff0, 11<<12 + 0xff0, 0x10}, {0x12000, 5 << 12, 0x10}}, nil},
		{"exactly one run", 0x12000, 0x1000, []Segment{{0x12000, 5 << 12, 0x1000}}, nil},
		{"up to the last byte", 0x130ff, 1, []Segment{{0x130ff, 20<<12 + 0xff, 1}}, nil},
		{"zero length", 0x12000, 0, nil, nil},
		{"one byte past the end", 0x13000, 0x101, nil, ErrMTTRange},
		{"starts before", 0x100ff, 2, nil, ErrMTTRange},
		{"wraps", 0x10100, math.MaxUint64, nil, ErrMTTRange},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := mtt.Segments(tt.va, tt.length)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("Segments(%#x, %d): err %v, want %v", tt.va, tt.length, err, tt.wantErr)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("Segments(%#x, %d) = %v, want %v", tt.va, tt.length, got, tt.want)
			}
		})
	}
	// AppendSegments reuses the caller's slice.
	buf := make([]Segment, 0, 4)
	if allocs := testing.AllocsPerRun(100, func() {
		buf, _ = mtt.AppendSegments(buf[:0], 0x10100, 3*4096)
	}); allocs != 0 {
		t.Errorf("AppendSegments: %v allocations", allocs)
	}
}

func TestMTTDeregister(t *testing.T) {
	m := newMem(t, 4096, 9)
	a := register(t, m, 0x1000, 20<<12, RemoteWrite)
	if err := a.Write(0x1000, []byte("hello")); err != nil {
		t.Fatal(err)
	}
	runs := a.Runs()
	if err := m.Deregister(a); err != nil {
		t.Fatal(err)
	}
	if m.PinnedPages() != 0 || m.TouchedBytes() != 0 {
		t.Errorf("after deregister: %d pages pinned, %d bytes stored", m.PinnedPages(), m.TouchedBytes())
	}
	if _, ok := a.Translate(0x1000); ok {
		t.Error("Translate succeeds after deregister")
	}
	if err := a.Write(0x1000, []byte{1}); !errors.Is(err, ErrMTTDeregistered) {
		t.Errorf("Write after deregister: %v", err)
	}
	if err := m.Deregister(a); !errors.Is(err, ErrMTTDeregistered) {
		t.Errorf("second Deregister: %v", err)
	}
	if err := newMem(t, 4096, 9).Deregister(register(t, newMem(t, 4096, 9), 0, 1, 0)); err == nil {
		t.Error("Deregister of another PhysMem's MTT succeeded")
	}
	// Freed frames are reused first, in the order freed, and hold no data.
	b := register(t, m, 0x1000, 20<<12, RemoteWrite)
	if got := b.Runs(); !slices.Equal(got, runs) {
		t.Errorf("re-registration: runs %v, want the freed %v", got, runs)
	}
	if n, _ := b.Read(0x1000, make([]byte, 5), nil); n != 0 {
		t.Errorf("re-registered memory has %d known bytes", n)
	}
}

func TestMemReadWrite(t *testing.T) {
	const va = 0x10100
	unknown := bytes.Repeat([]byte{0}, 8)
	type write struct {
		va   uint64
		data []byte
	}
	tests := []struct {
		name      string
		writes    []write // applied in order
		readVA    uint64
		readLen   int
		want      []byte
		wantKnown []bool
		wantErr   error
	}{
		{"never written", nil, va, 8, unknown, make([]bool, 8), nil},
		{"read after write", []write{{va, []byte("abcdefgh")}}, va, 8, []byte("abcdefgh"), []bool{true, true, true, true, true, true, true, true}, nil},
		{"partly written", []write{{va + 2, []byte("xy")}}, va, 6, []byte{0, 0, 'x', 'y', 0, 0},
			[]bool{false, false, true, true, false, false}, nil},
		{"across a run boundary", []write{{0x11ffc, []byte("12345678")}}, 0x11ffc, 8, []byte("12345678"),
			[]bool{true, true, true, true, true, true, true, true}, nil},
		{"overwrite", []write{{va, []byte("aaaa")}, {va + 1, []byte("bb")}}, va, 4, []byte("abba"),
			[]bool{true, true, true, true}, nil},
		{"read past the end", nil, 0x130fc, 8, nil, nil, ErrMTTRange},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mtt := testMTT(t)
			for _, w := range tt.writes {
				if err := mtt.Write(w.va, w.data); err != nil {
					t.Fatal(err)
				}
			}
			data, known := make([]byte, tt.readLen), make([]bool, tt.readLen)
			n, err := mtt.Read(tt.readVA, data, known)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("Read: err %v, want %v", err, tt.wantErr)
			}
			if err != nil {
				return
			}
			wantN := 0
			for _, k := range tt.wantKnown {
				if k {
					wantN++
				}
			}
			if !bytes.Equal(data, tt.want) || !slices.Equal(known, tt.wantKnown) || n != wantN {
				t.Errorf("Read = %q %v %d, want %q %v %d", data, known, n, tt.want, tt.wantKnown, wantN)
			}
		})
	}
}

func TestMemWriteLandsAtPA(t *testing.T) {
	mtt := testMTT(t)
	if err := mtt.Write(0x11ffe, []byte{1, 2, 3, 4}); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, 2)
	for _, tt := range []struct {
		pa   uint64
		want []byte
	}{{11<<12 + 0xffe, []byte{1, 2}}, {5 << 12, []byte{3, 4}}} {
		if n := mtt.mem.ReadPA(tt.pa, got, nil); n != 2 || !bytes.Equal(got, tt.want) {
			t.Errorf("ReadPA(%#x) = %v (%d known), want %v", tt.pa, got, n, tt.want)
		}
	}
	if err := mtt.Write(0x130ff, []byte{1, 2}); !errors.Is(err, ErrMTTRange) {
		t.Errorf("Write past the end: %v", err)
	}
	if _, err := mtt.Read(0x10100, make([]byte, 4), make([]bool, 3)); err == nil {
		t.Error("Read with a short known mask succeeded")
	}
}

func TestMemAtomics(t *testing.T) {
	le := func(v uint64) []byte { return binary.LittleEndian.AppendUint64(nil, v) }
	type op struct {
		write        []byte // written at va first, when not nil
		cas          bool
		a, b         uint64 // add, or compare and swap
		wantOrig     uint64
		wantKnown    bool
		wantErr      error
		wantAfter    []byte // the 8 bytes afterwards
		wantAfterKnw int
	}
	const va = 0x12008
	tests := []struct {
		name string
		va   uint64
		ops  []op
	}{
		{"fetch-add on unknown memory", va, []op{
			{a: 1, wantAfter: make([]byte, 8)},
		}},
		{"fetch-add little-endian", va, []op{
			{write: le(5), a: 3, wantOrig: 5, wantKnown: true, wantAfter: le(8), wantAfterKnw: 8},
			{a: math.MaxUint64, wantOrig: 8, wantKnown: true, wantAfter: le(7), wantAfterKnw: 8},
			{write: []byte{1, 0, 0, 0, 0, 0, 0, 0}, a: 0x100, wantOrig: 1, wantKnown: true, wantAfter: []byte{1, 1, 0, 0, 0, 0, 0, 0}, wantAfterKnw: 8},
		}},
		{"compare-swap hit then miss", va, []op{
			{write: le(8), cas: true, a: 8, b: 100, wantOrig: 8, wantKnown: true, wantAfter: le(100), wantAfterKnw: 8},
			{cas: true, a: 8, b: 200, wantOrig: 100, wantKnown: true, wantAfter: le(100), wantAfterKnw: 8},
		}},
		{"compare-swap on unknown memory", va, []op{
			{cas: true, a: 0, b: 1, wantAfter: make([]byte, 8)},
		}},
		{"partly known becomes unknown", va, []op{
			{write: []byte{1, 2, 3, 4}, a: 1, wantAfter: make([]byte, 8)},
		}},
		{"last 8 bytes of the MR", 0x130f8, []op{
			{write: le(1), a: 1, wantOrig: 1, wantKnown: true, wantAfter: le(2), wantAfterKnw: 8},
		}},
		{"misaligned", va + 4, []op{{a: 1, wantErr: ErrMTTMisaligned}}},
		{"misaligned compare-swap", va + 1, []op{{cas: true, wantErr: ErrMTTMisaligned}}},
		{"past the end", 0x13100, []op{{a: 1, wantErr: ErrMTTRange}}},
		{"before the start", 0x10000, []op{{cas: true, wantErr: ErrMTTRange}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mtt := testMTT(t)
			for i, o := range tt.ops {
				if o.write != nil {
					if err := mtt.Write(tt.va, o.write); err != nil {
						t.Fatal(err)
					}
				}
				var orig uint64
				var known bool
				var err error
				if o.cas {
					orig, known, err = mtt.CompareSwap(tt.va, o.a, o.b)
				} else {
					orig, known, err = mtt.FetchAdd(tt.va, o.a)
				}
				if !errors.Is(err, o.wantErr) || orig != o.wantOrig || known != o.wantKnown {
					t.Fatalf("op %d: = %d, %v, %v; want %d, %v, %v", i, orig, known, err, o.wantOrig, o.wantKnown, o.wantErr)
				}
				if err != nil {
					continue
				}
				after := make([]byte, 8)
				if n, _ := mtt.Read(tt.va, after, nil); n != o.wantAfterKnw || !bytes.Equal(after, o.wantAfter) {
					t.Errorf("op %d: memory afterwards %v (%d known), want %v (%d known)", i, after, n, o.wantAfter, o.wantAfterKnw)
				}
			}
		})
	}
}

func TestMemTouchedPagesOnly(t *testing.T) {
	tests := []struct {
		name     string
		pageSize uint64
		length   uint64
	}{
		{"1 GiB MR of 4 KiB pages", 4096, 1 << 30},
		{"4 GiB MR of 1 GiB pages", 1 << 30, 4 << 30},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := newMem(t, tt.pageSize, 1)
			mtt := register(t, m, 0x4000_0000, tt.length, 0)
			if m.TouchedBytes() != 0 {
				t.Fatalf("registration stored %d bytes", m.TouchedBytes())
			}
			for i, va := range []uint64{0x4000_0000, 0x4000_0000 + tt.length - 1} {
				if err := mtt.Write(va, []byte{0xaa}); err != nil {
					t.Fatal(err)
				}
				if want := uint64(i+1) * storeSize; m.TouchedBytes() != want {
					t.Errorf("after %d writes: %d bytes stored, want %d", i+1, m.TouchedBytes(), want)
				}
			}
			if err := m.Deregister(mtt); err != nil {
				t.Fatal(err)
			}
			if m.TouchedBytes() != 0 {
				t.Errorf("after deregister: %d bytes stored", m.TouchedBytes())
			}
		})
	}
}

func TestMemPageSmallerThanStorage(t *testing.T) {
	// With 64-byte pages, frames share storage chunks: freeing one frame
	// forgets its bytes only.
	m := newMem(t, 64, 5)
	m.WritePA(0, bytes.Repeat([]byte{1}, 128))
	m.clearPA(64, 64)
	got, known := make([]byte, 128), make([]bool, 128)
	if n := m.ReadPA(0, got, known); n != 64 || !known[63] || known[64] || got[64] != 0 {
		t.Errorf("after clearing frame 1: %d known, known[63]=%v known[64]=%v got[64]=%d", n, known[63], known[64], got[64])
	}
	m.clearPA(0, 64)
	if m.TouchedBytes() != 0 {
		t.Errorf("empty chunk kept: %d bytes", m.TouchedBytes())
	}
}

func TestMTTRegisterExhausted(t *testing.T) {
	m := newMem(t, 4096, 3)
	m.blocks = 1<<physBlockBits - 1 // one block left: at most 8 pages
	if _, err := m.Register(0, 20<<12, 0); err == nil {
		t.Fatal("Register beyond the physical memory succeeded")
	}
	if m.PinnedPages() != 0 || len(m.free)-m.freeHead == 0 {
		t.Errorf("after a failed registration: %d pinned, %d free frames", m.PinnedPages(), len(m.free)-m.freeHead)
	}
	// The frames taken are given back and reused.
	mtt := register(t, m, 0, uint64(len(m.free)-m.freeHead)<<12, 0)
	checkRuns(t, mtt, map[uint64]bool{})
}

// TestMTTLarge: an MR of more than maxRunsPerMR pages is pinned in
// power-of-two chunks, at most maxRunsPerMR runs, in a region of its own:
// a 1 TiB MR costs a bounded MTT, translates at its chunk boundaries,
// holds bytes at both ends and forgets them when deregistered.
func TestMTTLarge(t *testing.T) {
	m := newMem(t, 4096, 5)
	small := register(t, m, 0x1000, 16<<12, RemoteWrite)
	const va, length = 0x7f0000000800, 1 << 40 // not page aligned: one page more
	big := register(t, m, va, length, RemoteWrite|RemoteRead)
	pages := uint64(length>>12 + 1)
	runs := big.Runs()
	if big.Pages() != pages || len(runs) > maxRunsPerMR || m.PinnedPages() != pages+16 {
		t.Fatalf("%d pages in %d runs, %d pinned; want %d pages in at most %d runs", big.Pages(), len(runs), m.PinnedPages(), pages, maxRunsPerMR)
	}
	chunk := runs[0].Pages
	if chunk&(chunk-1) != 0 || chunk < 2 {
		t.Fatalf("chunk of %d pages: want a power of two", chunk)
	}
	var total uint64
	for i, r := range runs {
		total += r.Pages
		if r.PA>>12 < largeBase {
			t.Fatalf("run %d at PA %#x: below the large region (frame %#x)", i, r.PA, uint64(largeBase))
		}
		if i > 0 {
			prev := runs[i-1]
			if r.VA != prev.VA+prev.Pages<<12 || r.PA <= prev.PA+prev.Pages<<12 {
				t.Fatalf("runs %d and %d: %+v then %+v: want consecutive VAs and apart PAs", i-1, i, prev, r)
			}
		}
		if i < len(runs)-1 && r.Pages != chunk {
			t.Fatalf("run %d has %d pages, want %d", i, r.Pages, chunk)
		}
	}
	if total != pages {
		t.Fatalf("runs hold %d pages, want %d", total, pages)
	}
	for _, sr := range small.Runs() {
		if sr.PA>>12 >= largeBase {
			t.Fatalf("small MR run %+v in the large region", sr)
		}
	}
	// Translation across a chunk boundary: the last byte of one chunk and
	// the first of the next.
	edge := runs[1].VA
	if pa, ok := big.Translate(edge - 1); !ok || pa != runs[0].PA+runs[0].Pages<<12-1 {
		t.Errorf("Translate(%#x) = %#x, %v", edge-1, pa, ok)
	}
	if pa, ok := big.Translate(edge); !ok || pa != runs[1].PA {
		t.Errorf("Translate(%#x) = %#x, %v", edge, pa, ok)
	}
	segs, err := big.Segments(edge-8, 16)
	if err != nil || len(segs) != 2 || segs[0].Len != 8 || segs[1].PA != runs[1].PA {
		t.Errorf("Segments across the boundary: %+v, %v", segs, err)
	}
	// Bytes at both ends, then gone after deregistration.
	if err := big.Write(va, []byte("head")); err != nil {
		t.Fatal(err)
	}
	if err := big.Write(va+length-4, []byte("tail")); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, 4)
	if n, _ := big.Read(va+length-4, got, nil); n != 4 || string(got) != "tail" {
		t.Errorf("read back %q (%d known)", got, n)
	}
	if m.TouchedBytes() != 2*storeSize {
		t.Errorf("%d bytes of storage touched, want %d", m.TouchedBytes(), 2*storeSize)
	}
	if err := m.Deregister(big); err != nil {
		t.Fatal(err)
	}
	if m.TouchedBytes() != 0 || m.PinnedPages() != 16 {
		t.Errorf("after deregistration: %d bytes touched, %d pages pinned", m.TouchedBytes(), m.PinnedPages())
	}
	// A second large MR does not overlap the first's frames.
	big2 := register(t, m, 0, 1<<30, 0)
	if r := big2.Runs()[0]; r.PA <= runs[len(runs)-1].PA {
		t.Errorf("second large MR at %#x, not after the first's last chunk %#x", r.PA, runs[len(runs)-1].PA)
	}
}

// TestMTTLazyPlacement: MTTs are built when first used, from the frame
// generator's state at registration; the pages land exactly where
// registering them one by one put them (the digests are those of that
// code, before MTTs were lazy), with deregistrations reusing frames and a
// large MR among them.
func TestMTTLazyPlacement(t *testing.T) {
	want := map[uint64]uint64{64: 0x2b0bed2d54f5bd0a, 4096: 0x1e4256879d488ca1, 1 << 21: 0x53019d4d02313739}
	for _, ps := range []uint64{64, 4096, 1 << 21} {
		m := newMem(t, ps, 7)
		var mtts []*MTT
		for i := range uint64(3000) {
			va := 0x7f0000000000 + i*0x100000 + (i%5)*0x123
			l := []uint64{1, 4096, 8192, 65536, 300000}[i%5]
			if i == 1500 {
				l = 1 << 34
			}
			mtts = append(mtts, register(t, m, va, l, 0))
			if i%700 == 3 {
				if err := m.Deregister(mtts[i/2]); err != nil {
					t.Fatal(err)
				}
			}
		}
		h := fnv.New64a()
		for _, mt := range mtts {
			fmt.Fprint(h, mt.Runs(), mt.Pages())
		}
		if got := h.Sum64(); got != want[ps] {
			t.Errorf("page size %d: placement digest %#x, want %#x", ps, got, want[ps])
		}
	}
}
