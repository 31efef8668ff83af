package flow

// sessTable holds the tracker's sessions by ID (session ID - 1 is the
// index), in chunks of sessChunk pointers: a slice grown by append was
// copied at each doubling, and at a million QP pairs (two million
// sessions before pairing merges them) the copies and the arrays left
// behind cost a tenth of stats' CPU time and 40 MB (rocetap stats, 1M
// pairs, median of 7 interleaved runs, 2.39 -> 2.14 CPU s with the
// slice sized in advance). The first chunk grows by append, so that a
// small capture's table stays small.
type sessTable struct {
	chunks [][]*Session
	n      int
}

const (
	sessChunkBits = 15
	sessChunk     = 1 << sessChunkBits // 256 KB of pointers
)

// add appends s; it gets index len().
func (t *sessTable) add(s *Session) {
	if len(t.chunks) == 0 || len(t.chunks[len(t.chunks)-1]) == sessChunk {
		var c []*Session
		if len(t.chunks) > 0 {
			c = make([]*Session, 0, sessChunk)
		}
		t.chunks = append(t.chunks, c)
	}
	last := &t.chunks[len(t.chunks)-1]
	*last = append(*last, s)
	t.n++
}

// len returns the number of sessions added.
func (t *sessTable) len() int { return t.n }

// at returns the session at index i (nil once dropped), 0 <= i < len().
func (t *sessTable) at(i int) *Session { return t.chunks[i>>sessChunkBits][i&(sessChunk-1)] }

// drop forgets the session at index i (evicted).
func (t *sessTable) drop(i int) { t.chunks[i>>sessChunkBits][i&(sessChunk-1)] = nil }

// appendTo appends the sessions in index order, nil ones included.
func (t *sessTable) appendTo(dst []*Session) []*Session {
	for _, c := range t.chunks {
		dst = append(dst, c...)
	}
	return dst
}

// idQueue is a first-in first-out queue of session IDs in chunks of
// idChunk: the eviction clock's ring (Options.MaxSessions), which holds
// every session kept, and grew as a slice by copying as the sessions
// table did.
type idQueue struct {
	chunks [][]uint32 // chunks[0][head:], then the others whole
	head   int
	n      int
	spare  []uint32 // a used-up chunk, for the next one
}

const idChunk = 1 << 16 // 256 KB of IDs

// len returns the number of IDs queued.
func (q *idQueue) len() int { return q.n }

// push queues id last.
func (q *idQueue) push(id uint32) {
	if len(q.chunks) == 0 || len(q.chunks[len(q.chunks)-1]) == idChunk {
		var c []uint32 // the first chunk grows by append
		if len(q.chunks) > 0 {
			if c, q.spare = q.spare, nil; c == nil {
				c = make([]uint32, 0, idChunk)
			}
		}
		q.chunks = append(q.chunks, c)
	}
	last := &q.chunks[len(q.chunks)-1]
	*last = append(*last, id)
	q.n++
}

// pop takes the first ID; ok is false when the queue is empty.
func (q *idQueue) pop() (id uint32, ok bool) {
	if q.n == 0 {
		return 0, false
	}
	c := q.chunks[0]
	id = c[q.head]
	q.head++
	q.n--
	if q.head == len(c) {
		q.head = 0
		if len(q.chunks) == 1 {
			q.chunks[0] = c[:0]
		} else {
			if cap(c) == idChunk {
				q.spare = c[:0]
			}
			q.chunks[0] = nil
			q.chunks = q.chunks[1:]
		}
	}
	return id, true
}
