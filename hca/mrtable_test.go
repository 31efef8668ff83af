package hca

import (
	"runtime"
	"testing"
)

// manyMRs is a Config of n MRs of 4 KiB to 256 KiB, as an MPT file of a
// large application registers them.
func manyMRs(n int) *Config {
	c := &Config{PDs: []PDConfig{{ID: 1}}, MRs: make([]MRConfig, n)}
	lens := []uint64{4096, 8192, 65536, 262144}
	for i := range c.MRs {
		k := uint32(0x10000000 + i)
		c.MRs[i] = MRConfig{RKey: k, LKey: k, VA: 0x7f0000000000 + uint64(i)<<20, Length: lens[i%4], PD: 1, Access: RemoteRead | RemoteWrite}
	}
	return c
}

// ModelBytesPerMR bounds the heap a model holds per MR it was built with
// (the MR with its MTT, 104 bytes, and its slots in the rkey index), until
// the MR is first used: 114 measured.
const ModelBytesPerMR = 120

// TestModelMemory builds a model of 100,000 MRs and checks the heap it
// holds: MTTs are built when first used, so an MR nothing touches costs
// its MPT entry, not its pages.
func TestModelMemory(t *testing.T) {
	const n = 100000
	c := manyMRs(n)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	m, err := NewModel(c, Options{})
	if err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	grew := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	t.Logf("model of %d MRs: heap grew %d bytes, %.1f bytes/MR", n, grew, float64(grew)/n)
	if grew > n*ModelBytesPerMR {
		t.Errorf("model of %d MRs holds %d bytes (%.1f/MR); want at most %d per MR", n, grew, float64(grew)/n, ModelBytesPerMR)
	}
	// Every MR is found by its rkey and translates.
	for i := 0; i < n; i += 997 {
		r := c.MRs[i]
		mr := m.MRByKey(r.RKey)
		if mr == nil || mr.LKey != r.LKey || mr.VA != r.VA {
			t.Fatalf("MRByKey(%#x) = %+v, want MR %d", r.RKey, mr, i)
		}
		if pa, ok := mr.MTT.Translate(r.VA + r.Length - 1); !ok || pa == 0 {
			t.Fatalf("MR %d: Translate(last byte) = %#x, %v", i, pa, ok)
		}
	}
	runtime.KeepAlive(m)
	runtime.KeepAlive(c)
}

// TestMRTable: the rkey index agrees with a map, with keys that collide in
// the table, rkey 0 (not indexed) and a key registered twice (the later
// MR wins, as re-registering replaces the MPT entry), across growth and
// MRs registered after the Config's.
func TestMRTable(t *testing.T) {
	c := &Config{PDs: []PDConfig{{ID: 1}}}
	var keys []uint32
	for i := range uint32(3000) {
		keys = append(keys, i<<25|i&7, i*0x9e3779b1, i<<8|0x3b) // clustered, colliding, rxe-like
	}
	keys = append(keys, 0, 0, keys[5], keys[700])
	for i, k := range keys[:4000] {
		c.MRs = append(c.MRs, MRConfig{RKey: k, LKey: uint32(i), VA: uint64(i) << 16, Length: 64, PD: 1})
	}
	m, err := NewModel(c, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for i, k := range keys[4000:] {
		if _, err := m.RegisterMR(MRConfig{RKey: k, LKey: uint32(4000 + i), VA: uint64(4000+i) << 16, Length: 64, PD: 1}); err != nil {
			t.Fatal(err)
		}
	}
	want := map[uint32]uint32{} // rkey → lkey of the last MR with it
	for i, k := range keys {
		if k != 0 {
			want[k] = uint32(i)
		}
	}
	for k, lkey := range want {
		if mr := m.MRByKey(k); mr == nil || mr.LKey != lkey {
			t.Fatalf("MRByKey(%#x) = %+v, want the MR with lkey %d", k, mr, lkey)
		}
	}
	for _, k := range []uint32{0, 1, 0xffffffff, 0x12345678} {
		if _, ok := want[k]; !ok && m.MRByKey(k) != nil {
			t.Errorf("MRByKey(%#x) = %+v, want nil", k, m.MRByKey(k))
		}
	}
	mrs := m.MRs()
	if len(mrs) != len(keys) {
		t.Fatalf("%d MRs, want %d", len(mrs), len(keys))
	}
	for i, mr := range mrs {
		if mr.LKey != uint32(i) || mr.MTT == nil || mr.MTT.VA() != uint64(i)<<16 {
			t.Fatalf("MRs()[%d] = %+v", i, mr)
		}
	}
}

var sinkMR *MR

func TestMRByKeyNoAllocs(t *testing.T) {
	m, err := NewModel(manyMRs(1000), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if a := testing.AllocsPerRun(100, func() { sinkMR = m.MRByKey(0x10000000 + 512) }); a != 0 || sinkMR == nil {
		t.Errorf("MRByKey: %v allocations, MR %v", a, sinkMR)
	}
}

func BenchmarkNewModel(b *testing.B) {
	c := manyMRs(100000)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := NewModel(c, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}
