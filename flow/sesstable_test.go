package flow

import "testing"

// TestSessTable: sessions are found by index across chunks, a dropped
// one reads nil, and appendTo lists them in order.
func TestSessTable(t *testing.T) {
	for _, n := range []int{0, 1, sessChunk - 1, sessChunk, sessChunk + 1, 3*sessChunk + 7} {
		var tab sessTable
		ss := make([]Session, n)
		for i := range ss {
			tab.add(&ss[i])
		}
		if tab.len() != n {
			t.Fatalf("n=%d: len %d", n, tab.len())
		}
		for i := range ss {
			if tab.at(i) != &ss[i] {
				t.Fatalf("n=%d: at(%d) is not the %dth session added", n, i, i)
			}
		}
		if n > 0 {
			tab.drop(n - 1)
			if tab.at(n-1) != nil {
				t.Fatalf("n=%d: dropped session still there", n)
			}
		}
		all := tab.appendTo(nil)
		if len(all) != n {
			t.Fatalf("n=%d: appendTo gave %d", n, len(all))
		}
		for i := range n - 1 {
			if all[i] != &ss[i] {
				t.Fatalf("n=%d: appendTo[%d] out of order", n, i)
			}
		}
	}
}

// TestIDQueue: first in, first out across chunks, with pushes and pops
// interleaved as the eviction clock does them (it pops one and pushes
// it back), and chunks given back and reused.
func TestIDQueue(t *testing.T) {
	var q idQueue
	var want []uint32 // the reference: a plain slice
	next := uint32(1)
	check := func(step string) {
		t.Helper()
		if q.len() != len(want) {
			t.Fatalf("%s: len %d, want %d", step, q.len(), len(want))
		}
	}
	for round := range 5 {
		for range idChunk + 1000*round {
			q.push(next)
			want = append(want, next)
			next++
		}
		check("push")
		for i := range idChunk/2 + 3 {
			id, ok := q.pop()
			if !ok || id != want[0] {
				t.Fatalf("round %d pop %d: %d %v, want %d", round, i, id, ok, want[0])
			}
			want = want[1:]
			if i%3 == 0 { // pushed back, as a session with a recent packet
				q.push(id)
				want = append(want, id)
			}
		}
		check("pop")
	}
	for len(want) > 0 {
		id, ok := q.pop()
		if !ok || id != want[0] {
			t.Fatalf("drain: %d %v, want %d", id, ok, want[0])
		}
		want = want[1:]
	}
	if id, ok := q.pop(); ok {
		t.Fatalf("pop of an empty queue gave %d", id)
	}
	q.push(7)
	if id, ok := q.pop(); !ok || id != 7 {
		t.Fatalf("after emptying: %d %v", id, ok)
	}
}
