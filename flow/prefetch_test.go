package flow

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/rocetap/rocetap/decode"
	"github.com/rocetap/rocetap/internal/synth"
)

// Prefetch (what the decoder calls before the ICRC) changes nothing
// Track finds: past the table size from which it works, every packet of
// 70,000 QP pairs gets the same session, direction and pairing, and
// every session the same counts and endpoints, as without it. Every 7th
// packet comes without a Prefetch: the one of the packet before must not
// be taken for it; every 5th after a Prefetch of a packet Track never
// gets, whose session (from the cache) must not be taken for it either.
func TestPrefetchChangesNothing(t *testing.T) {
	const pairs = 70000
	type got struct {
		session uint32
		dir     decode.Direction
		learned decode.Pairing
	}
	run := func(pre bool) ([]got, *Tracker) {
		tr := New(Options{})
		var out []got
		n := 0
		var last decode.Packet
		before := func(p *decode.Packet) {
			if n++; pre && n%5 == 0 && last.Frame.Number != 0 {
				tr.Prefetch(&last) // a packet Track never gets (its direction cached)
			}
			if pre && n%7 != 0 {
				tr.Prefetch(p)
			}
		}
		after := func(p *decode.Packet) {
			out = append(out, got{p.Analysis.Session, p.Analysis.Dir, p.Analysis.Learned})
			last = *p
			last.Frame.Number = -1
		}
		trackPairsEach(tr, pairs, epoch, before, after)
		return out, tr
	}
	plainPkts, plain := run(false)
	prePkts, pre := run(true)
	if len(plain.halves.slots) < prefetchMinSlots {
		t.Fatalf("the table has %d slots: the test must pass %d for Prefetch to work", len(plain.halves.slots), prefetchMinSlots)
	}
	for i := range plainPkts {
		if plainPkts[i] != prePkts[i] {
			t.Fatalf("packet %d: with Prefetch %+v, without %+v", i+1, prePkts[i], plainPkts[i])
		}
	}
	a, b := plain.Sessions(), pre.Sessions()
	if len(a) != len(b) || len(a) != pairs {
		t.Fatalf("%d sessions with Prefetch, %d without, want %d", len(b), len(a), pairs)
	}
	for i := range a {
		if a[i].ID != b[i].ID || a[i].Sent != b[i].Sent || a[i].Learned != b[i].Learned || a[i].A != b[i].A || a[i].B != b[i].B || a[i].MessageCount() != b[i].MessageCount() {
			t.Fatalf("session %d: with Prefetch %+v, without %+v", a[i].ID, b[i], a[i])
		}
	}
}

// The stream decodes a packet, and so calls Prefetch, before it tracks
// the one before it: what Prefetch found must not be taken once Track
// changed what directions map to. Past the table size Prefetch works
// from: two packets of a new address pair (the first interns it, after
// Prefetch found the second's pair unknown), then a packet whose session
// Prefetch found in the cache and which is evicted before it is
// tracked. Then every packet of 40,000 QP pairs tracked a packet behind
// its Prefetch, as the stream does it, against Track alone.
func TestPrefetchAhead(t *testing.T) {
	const pairs = 40000
	tr := New(Options{})
	end := trackPairs(tr, pairs, epoch)
	if len(tr.halves.slots) < prefetchMinSlots {
		t.Fatalf("the table has %d slots: the test must pass %d for Prefetch to work", len(tr.halves.slots), prefetchMinSlots)
	}
	const write, read = decode.Opcode(decode.TransportRC | decode.OpWriteOnly), decode.Opcode(decode.TransportRC | decode.OpReadRequest)
	g := &gen{qa: 0x77, qb: 0x78}
	g.req(write, 1, reth(64), payload(64)).req(read, 2, reth(64)).req(read, 3, reth(64))
	fs := g.frames
	for i := range fs {
		fs[i].Frame.Number = 4*pairs + i + 1
		fs[i].Frame.Time = end.Add(fs[i].Frame.Time.Sub(epoch))
	}
	tr.Prefetch(&fs[0])
	tr.Prefetch(&fs[1]) // its address pair is not interned yet
	tr.Track(&fs[0])
	tr.Track(&fs[1])
	s := fs[0].Analysis.Session
	if s == 0 || fs[1].Analysis.Session != s {
		t.Fatalf("a new address pair: the first packet in session %d, the second in %d, want one", s, fs[1].Analysis.Session)
	}
	tr.Prefetch(&fs[2]) // found in the cache
	tr.evict(tr.Session(s))
	tr.Track(&fs[2])
	if got := fs[2].Analysis.Session; got == s || got == 0 {
		t.Fatalf("a packet of evicted session %d went to session %d, want a new one", s, got)
	}

	pairsOf := func(each func(*decode.Packet)) { synth.QPPairs(pairs, epoch, each) }
	sameAhead(t, "QP pairs", trackAhead(New(Options{}), false, pairsOf), trackAhead(New(Options{}), true, pairsOf))
}

// randomRC calls each with n packets of random RC traffic between 8 host
// pairs and, from time to time, a new one (its addresses interned then):
// multi-packet WRITEs (consecutive packets of one direction), READs,
// SENDs, ACKs, responses before their request (a provisional session
// that the request's answer merges, then a packet on the merged
// direction), ACKs answering nothing. The same seed gives the
// same packets, numbered from frame, from time at.
func randomRC(seed uint64, n, frame int, at time.Time, each func(p *decode.Packet)) {
	r := rand.New(rand.NewPCG(seed, 3))
	type pair struct {
		a, b   [4]byte
		qa, qb uint32
		psn    uint32
	}
	var pairs []pair
	hosts := 8
	var p decode.Packet
	emit := func(q *pair, toB bool, op decode.Opcode, psn uint32, hdr decode.Hdr, payload int) {
		frame++
		at = at.Add(time.Microsecond)
		p = decode.Packet{Frame: decode.Frame{Number: frame, Time: at, Len: 100 + payload}, Has: decode.HdrEth | decode.HdrIPv4 | decode.HdrUDP | decode.HdrBTH | hdr, Encap: decode.EncapRoCEv2}
		p.IPv4.Src, p.IPv4.Dst, p.BTH.DestQP = q.a, q.b, q.qb
		if !toB {
			p.IPv4.Src, p.IPv4.Dst, p.BTH.DestQP = q.b, q.a, q.qa
		}
		p.BTH.Opcode, p.BTH.PSN = op, decode.PSNOf(psn)
		if hdr&decode.HdrRETH != 0 {
			p.RETH.DMALen = 256
		}
		if hdr&decode.HdrAETH != 0 {
			p.AETH.Syndrome = 0x1f
		}
		if payload > 0 {
			p.Has |= decode.HdrPayload
			p.Payload = make([]byte, payload)
		}
		each(&p)
	}
	rc := func(o uint8) decode.Opcode { return decode.TransportRC.Opcode(o) }
	for frame < n {
		if len(pairs) < 3000 && r.IntN(4) == 0 {
			if r.IntN(50) == 0 {
				hosts++ // a new host pair
			}
			h := byte(r.IntN(hosts))
			i := uint32(len(pairs))
			pairs = append(pairs, pair{[4]byte{10, 3, h, 1}, [4]byte{10, 3, h, 2}, 0x800000 + 2*i, 0x800001 + 2*i, r.Uint32N(1 << 24)})
		}
		if len(pairs) == 0 {
			continue
		}
		q := &pairs[r.IntN(len(pairs))]
		psn := q.psn
		switch r.IntN(5) {
		case 0: // WRITE First, Middle, Last, ACK
			emit(q, true, rc(decode.OpWriteFirst), psn, decode.HdrRETH, 256)
			emit(q, true, rc(decode.OpWriteMiddle), psn+1, 0, 256)
			emit(q, true, rc(decode.OpWriteLast), psn+2, 0, 256)
			emit(q, false, rc(decode.OpAcknowledge), psn+2, decode.HdrAETH, 0)
			q.psn += 3
		case 1: // READ and its response
			emit(q, true, rc(decode.OpReadRequest), psn, decode.HdrRETH, 0)
			emit(q, false, rc(decode.OpReadResponseOnly), psn, decode.HdrAETH, 256)
			q.psn++
		case 2: // the response first, then the request, answered again (the merge), and again
			emit(q, false, rc(decode.OpReadResponseOnly), psn, decode.HdrAETH, 256)
			emit(q, true, rc(decode.OpReadRequest), psn, decode.HdrRETH, 0)
			emit(q, false, rc(decode.OpReadResponseOnly), psn, decode.HdrAETH, 256)
			emit(q, false, rc(decode.OpReadResponseOnly), psn, decode.HdrAETH, 256)
			q.psn++
		case 3: // SEND Only, ACK
			emit(q, true, rc(decode.OpSendOnly), psn, 0, 64)
			emit(q, false, rc(decode.OpAcknowledge), psn, decode.HdrAETH, 0)
			q.psn++
		case 4: // an ACK answering nothing
			emit(q, false, rc(decode.OpAcknowledge), psn+100, decode.HdrAETH, 0)
		}
	}
}

// Tracked a packet behind its Prefetch, as the stream does it, random RC
// traffic (randomRC, after 40,000 QP pairs grew the direction table past
// where Prefetch works) gets every packet the session and direction that
// Prefetch then Track on each packet in turn gives: with the sessions
// kept, and with --max-sessions evicting. It fails if Track takes what
// Prefetch found after a direction was mapped anew (a merge) or a
// session evicted.
func TestPrefetchAheadRandom(t *testing.T) {
	const warm, n = 40000, 60000
	for _, max := range []int{0, 30000} {
		run := func(ahead bool) ([]uint32, Evicted) {
			tr := New(Options{MaxSessions: max})
			end := trackPairs(tr, warm, epoch)
			if !tr.Prefetching() {
				t.Fatalf("the table has %d slots: Prefetch does not work yet", len(tr.halves.slots))
			}
			out := trackAhead(tr, ahead, func(each func(*decode.Packet)) { randomRC(9, 4*warm+n, 4*warm, end, each) })
			return out, tr.Evicted()
		}
		plain, pe := run(false)
		ahead, ae := run(true)
		if max > 0 && pe.Sessions == 0 {
			t.Fatalf("MaxSessions %d: nothing evicted: the test misses what it is for", max)
		}
		if pe.Sessions != ae.Sessions || pe.Packets != ae.Packets {
			t.Fatalf("MaxSessions %d: %d sessions evicted a packet ahead, %d in turn", max, ae.Sessions, pe.Sessions)
		}
		sameAhead(t, fmt.Sprintf("MaxSessions %d, random traffic (after %d warm-up packets)", max, 4*warm), plain, ahead)
	}
}

// trackAhead tracks with tr the packets gen passes to its argument, in
// turn (Prefetch then Track, each packet) or a packet ahead as the
// stream does it (the next packet's Prefetch before the Track of the one
// before), and returns each packet's session<<1|direction.
func trackAhead(tr *Tracker, ahead bool, gen func(each func(*decode.Packet))) []uint32 {
	var out []uint32
	var held decode.Packet
	have := false // (ahead: held is the packet before, to track)
	track := func(p *decode.Packet) {
		tr.Track(p)
		out = append(out, p.Analysis.Session<<1|uint32(p.Analysis.Dir))
	}
	gen(func(p *decode.Packet) {
		if !ahead {
			tr.Prefetch(p)
			track(p)
			return
		}
		next := *p
		tr.Prefetch(&next)
		if have {
			track(&held)
		}
		held, have = next, true
	})
	if have {
		track(&held)
	}
	return out
}

// sameAhead fails unless plain and ahead (trackAhead's) agree on every packet.
func sameAhead(t *testing.T, what string, plain, ahead []uint32) {
	t.Helper()
	if len(plain) != len(ahead) {
		t.Fatalf("%s: %d packets a packet ahead, %d in turn", what, len(ahead), len(plain))
	}
	for i := range plain {
		if plain[i] != ahead[i] {
			t.Fatalf("%s: packet %d: session<<1|dir %d a packet ahead, %d in turn", what, i+1, ahead[i], plain[i])
		}
	}
}
