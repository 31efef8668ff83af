package hca

import (
	"runtime"
	"testing"
)

func TestCacheNew(t *testing.T) {
	for _, n := range []int{0, -1, 1<<30 + 1} {
		if _, err := NewTranslationCache(n); err == nil {
			t.Errorf("NewTranslationCache(%d) succeeded", n)
		}
	}
	c, err := NewTranslationCache(16)
	if err != nil || c.Capacity() != 16 || c.Len() != 0 {
		t.Fatalf("NewTranslationCache(16) = %v, %v", c, err)
	}
}

// access is one scripted lookup: QP, MR (index into the test's MRs) and
// page (with an offset within it).
type access struct {
	qpn  uint32
	mr   int
	page uint64
	off  uint64
}

func TestCacheCounts(t *testing.T) {
	seq := func(qpn uint32, pages, perPage int) []access {
		var a []access
		for p := range pages {
			for i := range perPage {
				a = append(a, access{qpn, 0, uint64(p), uint64(i) * 4096 / uint64(perPage)})
			}
		}
		return a
	}
	pages := func(qpn uint32, mr int, ps ...uint64) []access {
		var a []access
		for _, p := range ps {
			a = append(a, access{qpn, mr, p, 0x10})
		}
		return a
	}
	repeat := func(n int, a []access) []access {
		var out []access
		for range n {
			out = append(out, a...)
		}
		return out
	}
	tests := []struct {
		name          string
		entries       int
		script        []access
		want          CacheStats
		wantEvictions uint64
		wantLen       int
		wantQP        map[uint32]CacheStats
		wantMR        map[int]CacheStats
	}{
		{"sequential in one page", 4, seq(1, 1, 100), CacheStats{99, 1}, 0, 1, nil, nil},
		{"sequential over pages", 4, seq(1, 8, 8), CacheStats{56, 8}, 4, 4, nil, nil},
		{"scattered within capacity", 4, pages(1, 0, 0, 3, 1, 2, 0, 3, 1, 2), CacheStats{4, 4}, 0, 4, nil, nil},
		{"thrashing one beyond capacity", 4, repeat(4, pages(1, 0, 0, 1, 2, 3, 4)), CacheStats{0, 20}, 16, 4, nil, nil},
		{"LRU keeps the recent page", 2, pages(1, 0, 0, 1, 0, 2, 0, 1), CacheStats{2, 4}, 2, 2, nil, nil},
		{"per QP", 4, append(pages(1, 0, 0, 1), pages(2, 0, 0, 1, 2)...), CacheStats{2, 3}, 0, 3,
			map[uint32]CacheStats{1: {0, 2}, 2: {2, 1}, 3: {}}, nil},
		{"per MR: same page of two MRs", 4, append(pages(1, 0, 0, 0), pages(1, 1, 0, 0, 0)...), CacheStats{3, 2}, 0, 2,
			nil, map[int]CacheStats{0: {1, 1}, 1: {2, 1}}},
		{"two MRs thrash a shared cache", 2, repeat(3, append(pages(1, 0, 0, 1), pages(1, 1, 0)...)), CacheStats{0, 9}, 7, 2,
			nil, map[int]CacheStats{0: {0, 6}, 1: {0, 3}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := newMem(t, 4096, 11)
			keys := []uint32{0x1234, 0x5678}
			mrs := []*MTT{
				register(t, m, 0x10000, 16<<12, RemoteRead),
				register(t, m, 0x10000, 16<<12, RemoteRead),
			}
			c, err := NewTranslationCache(tt.entries)
			if err != nil {
				t.Fatal(err)
			}
			for i, a := range tt.script {
				va := 0x10000 + a.page<<12 + a.off
				pa, _, ok := c.Lookup(a.qpn, keys[a.mr], mrs[a.mr], va)
				if want, _ := mrs[a.mr].Translate(va); !ok || pa != want {
					t.Fatalf("lookup %d (%+v): pa %#x, ok %v; want %#x", i, a, pa, ok, want)
				}
			}
			if c.Total() != tt.want || c.Evictions() != tt.wantEvictions || c.Len() != tt.wantLen {
				t.Errorf("total %+v, %d evictions, %d cached; want %+v, %d, %d",
					c.Total(), c.Evictions(), c.Len(), tt.want, tt.wantEvictions, tt.wantLen)
			}
			for qpn, want := range tt.wantQP {
				if got := c.QP(qpn); got != want {
					t.Errorf("QP %d: %+v, want %+v", qpn, got, want)
				}
			}
			for mr, want := range tt.wantMR {
				if got := c.MR(keys[mr]); got != want {
					t.Errorf("MR %#x: %+v, want %+v", keys[mr], got, want)
				}
			}
			var sum CacheStats
			for _, s := range c.PerQP() {
				sum.Hits += s.Hits
				sum.Misses += s.Misses
			}
			if sum != c.Total() {
				t.Errorf("per-QP counts sum to %+v, total %+v", sum, c.Total())
			}
			sum = CacheStats{}
			for _, s := range c.PerMR() {
				sum.Hits += s.Hits
				sum.Misses += s.Misses
			}
			if sum != c.Total() {
				t.Errorf("per-MR counts sum to %+v, total %+v", sum, c.Total())
			}
		})
	}
}

func TestCacheHitFlag(t *testing.T) {
	m := newMem(t, 4096, 1)
	mtt := register(t, m, 0x10800, 8192, RemoteRead)
	c, _ := NewTranslationCache(2)
	tests := []struct {
		va      uint64
		hit, ok bool
	}{
		{0x10800, false, true},
		{0x10fff, true, true},
		{0x107ff, false, false}, // same page, before the MR: not counted
		{0x11000, false, true},
		{0x12800, false, false}, // one past the end
		{0x127ff, false, true},
		{0x10900, false, true}, // evicted by 0x12000's page
	}
	for _, tt := range tests {
		pa, hit, ok := c.Lookup(1, 7, mtt, tt.va)
		want, _ := mtt.Translate(tt.va)
		if hit != tt.hit || ok != tt.ok || pa != want {
			t.Errorf("Lookup(%#x) = %#x, %v, %v; want %#x, %v, %v", tt.va, pa, hit, ok, want, tt.hit, tt.ok)
		}
	}
	if got := c.Total(); got != (CacheStats{1, 4}) {
		t.Errorf("total %+v, want {1 4}", got)
	}
}

func TestCacheInvalidate(t *testing.T) {
	m := newMem(t, 4096, 1)
	a := register(t, m, 0x10000, 4<<12, RemoteRead)
	b := register(t, m, 0x10000, 4<<12, RemoteRead)
	c, _ := NewTranslationCache(8)
	for p := range uint64(4) {
		c.Lookup(1, 0xa, a, 0x10000+p<<12)
		c.Lookup(1, 0xb, b, 0x10000+p<<12)
	}
	if n := c.Invalidate(0xa); n != 4 || c.Len() != 4 {
		t.Fatalf("Invalidate(0xa) = %d, %d left; want 4, 4", n, c.Len())
	}
	if _, hit, _ := c.Lookup(1, 0xa, a, 0x10000); hit {
		t.Error("hit after Invalidate")
	}
	if _, hit, _ := c.Lookup(1, 0xb, b, 0x10000); !hit {
		t.Error("other MR's translation lost")
	}
	// The same key re-registered: the old translation is stale, a miss.
	if err := m.Deregister(a); err != nil {
		t.Fatal(err)
	}
	a2 := register(t, m, 0x10000, 4<<12, RemoteRead)
	pa, hit, ok := c.Lookup(1, 0xa, a2, 0x10000)
	if want, _ := a2.Translate(0x10000); hit || !ok || pa != want {
		t.Errorf("re-registered MR: %#x, hit %v, ok %v; want %#x, miss", pa, hit, ok, want)
	}
	if _, hit, _ := c.Lookup(1, 0xa, a2, 0x10000); !hit {
		t.Error("refreshed translation missed")
	}
	if _, _, ok := c.Lookup(1, 0xa, a, 0x10000); ok {
		t.Error("lookup in a deregistered MR succeeded")
	}
	// Slots freed by Invalidate are reused before evicting: 0xa holds
	// one, 0xb four, three are free.
	for p := range uint64(3) {
		c.Lookup(2, 0xc, a2, 0x10000+p<<12)
	}
	if c.Evictions() != 0 || c.Len() != 8 {
		t.Errorf("%d evictions, %d cached; want 0, 8", c.Evictions(), c.Len())
	}
}

func cacheForBench(tb testing.TB) (*TranslationCache, *MTT) {
	m, err := NewPhysMem(4096, 1)
	if err != nil {
		tb.Fatal(err)
	}
	mtt, err := m.Register(0x10000, 1<<20, RemoteRead)
	if err != nil {
		tb.Fatal(err)
	}
	c, err := NewTranslationCache(64)
	if err != nil {
		tb.Fatal(err)
	}
	for p := range uint64(64) {
		c.Lookup(1, 0x42, mtt, 0x10000+p<<12)
	}
	return c, mtt
}

var sinkPA uint64

func TestCacheLookupHitNoAllocs(t *testing.T) {
	c, mtt := cacheForBench(t)
	i := uint64(0)
	allocs := testing.AllocsPerRun(1000, func() {
		pa, hit, _ := c.Lookup(1, 0x42, mtt, 0x10000+(i%64)<<12+i%4096)
		if !hit {
			t.Fatal("miss")
		}
		sinkPA = pa
		i++
	})
	if allocs != 0 {
		t.Errorf("Lookup hit: %v allocations", allocs)
	}
}

func BenchmarkCacheLookupHit(b *testing.B) {
	c, mtt := cacheForBench(b)
	b.ReportAllocs()
	for i := range uint64(b.N) {
		pa, _, _ := c.Lookup(1, 0x42, mtt, 0x10000+(i%64)<<12)
		sinkPA = pa
	}
}

// TestCacheGrowsOnDemand: --cache-entries takes up to 2^30, so a cache of
// 2^30 entries must cost what it holds, not what it could hold (it
// preallocated ~53 bytes per entry, 57 GB, and replay died out of memory).
// The counts are those of a small cache until it would evict.
func TestCacheGrowsOnDemand(t *testing.T) {
	m, err := NewPhysMem(4096, 1)
	if err != nil {
		t.Fatal(err)
	}
	mtt, err := m.Register(0x10000, 1<<20, RemoteRead)
	if err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	c, err := NewTranslationCache(1 << 30)
	if err != nil {
		t.Fatal(err)
	}
	for p := range uint64(256) {
		c.Lookup(1, 0x42, mtt, 0x10000+p<<12)
		c.Lookup(1, 0x42, mtt, 0x10000+p<<12+8)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	grew := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	t.Logf("2^30-entry cache holding 256 translations: heap grew %d bytes", grew)
	if grew > 1<<20 {
		t.Errorf("a 2^30-entry cache holding 256 translations grew the heap by %d bytes; want under 1 MiB", grew)
	}
	if got := c.Total(); got != (CacheStats{Hits: 256, Misses: 256}) || c.Len() != 256 || c.Evictions() != 0 {
		t.Errorf("counts %+v, %d cached, %d evictions; want 256 hits, 256 misses, 256 cached, none evicted", got, c.Len(), c.Evictions())
	}
	runtime.KeepAlive(c)
}
