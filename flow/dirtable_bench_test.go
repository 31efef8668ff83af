package flow

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

var dirSink uint32

// BenchmarkDirTable: new keys as the tracker meets them (a lookup that
// misses, then a set), in a table that grows to size keys and starts
// again; and lookups of keys present in a table of size keys. One op is
// one key.
func BenchmarkDirTable(b *testing.B) {
	for _, size := range []int{1 << 10, 1 << 16, 2 << 20} {
		keys := make([]dirKey, size)
		r := rand.New(rand.NewPCG(uint64(size), 1))
		for i := range keys {
			keys[i] = dirKey(uint64(r.IntN(64))<<24 | uint64(r.Uint32N(1<<24)))
		}
		// newKeys inserts keys as the tracker meets them, calling
		// between (when not nil) after each
		newKeys := func(b *testing.B, between func(i int)) {
			b.ReportAllocs()
			var tab dirTable
			i := 0
			for b.Loop() {
				if i == size {
					tab, i = dirTable{}, 0
				}
				k := keys[i]
				if _, ok := tab.get(k); !ok {
					tab.set(k, uint32(i))
				}
				if between != nil {
					between(i)
				}
				i++
			}
		}
		b.Run(fmt.Sprint("new/", size), func(b *testing.B) { newKeys(b, nil) })
		// new keys again, with what the tracker does between them: it
		// writes a session and reads packets, about 1 KiB of memory not
		// in cache per key, which evicts the table
		b.Run(fmt.Sprint("new+mem/", size), func(b *testing.B) {
			mem := make([]uint64, 64<<20/8) // twice the last-level cache
			at := 0
			newKeys(b, func(i int) {
				for j := 0; j < 1024/8; j += 8 { // a write per cache line
					mem[at+j] = uint64(i)
				}
				if at += 1024 / 8; at == len(mem) {
					at = 0
				}
			})
		})
		b.Run(fmt.Sprint("hit/", size), func(b *testing.B) {
			var tab dirTable
			for i, k := range keys {
				tab.set(k, uint32(i))
			}
			b.ReportAllocs()
			b.ResetTimer()
			i := 0
			for b.Loop() {
				v, _ := tab.get(keys[i])
				dirSink += v
				if i++; i == size {
					i = 0
				}
			}
		})
	}
}
