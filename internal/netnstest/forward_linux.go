//go:build linux

package netnstest

import (
	"bytes"
	"container/heap"
	"fmt"
	"math/rand"
	"sync"
	"time"

	"github.com/rocetap/rocetap/decode"
	"golang.org/x/sys/unix"
)

// Impair is what Forward does to one direction. Index n counts the
// RoCEv2 frames the direction received, from 0; other frames cross with
// the delay only.
type Impair struct {
	// Each frame is held Delay plus a uniform jitter in [-Jitter, +Jitter]
	// (from Seed) before it is sent on.
	Delay, Jitter time.Duration
	Seed          int64
	Drop          map[int]bool          // never sent on
	Dup           map[int]bool          // sent twice, back to back
	Hold          map[int]time.Duration // held this much longer (later frames overtake it)
}

// Hop is one frame that reached the forwarder, as its log has it.
type Hop struct {
	Index    int  // RoCEv2 frame index of the direction (-1: not RoCEv2)
	Out      int  // place in the order sent on, from 0 (-1: dropped); a copy's is its own
	Copy     bool // the second copy of a Dup frame
	Dropped  bool
	Frame    []byte
	Received time.Time
	Sent     time.Time
}

// Forwarder moves frames between the two interfaces of a Line's middle
// namespace through AF_PACKET sockets, with the delay, jitter, loss,
// duplication and reordering of each direction's Impair (the kernels
// this runs on have no netem qdisc), and logs every frame.
type Forwarder struct {
	fd   [2]int // on IfMA, on IfMB
	sa   [2]unix.SockaddrLinklayer
	imp  [2]Impair
	stop chan struct{}
	wg   sync.WaitGroup

	mu   sync.Mutex
	log  [2][]Hop // 0: A to B, 1: B to A
	sent [2]int
	err  error
}

// Forward starts forwarding: ab is applied to frames from IfMA to IfMB
// (A to B), ba to the others. Stop ends it.
func Forward(l *Line, ab, ba Impair) (*Forwarder, error) {
	f := &Forwarder{imp: [2]Impair{ab, ba}, stop: make(chan struct{}), fd: [2]int{-1, -1}}
	err := Enter(l.NsM, func() error {
		for i, ifname := range []string{l.IfMA, l.IfMB} {
			fd, sa, err := openRaw(ifname)
			if err != nil {
				return err
			}
			f.fd[i], f.sa[i] = fd, sa
		}
		return nil
	})
	if err != nil {
		f.close()
		return nil, err
	}
	for dir := range 2 {
		ch := make(chan *pending, 4096)
		f.wg.Add(2)
		go f.receive(dir, ch)
		go f.send(dir, ch)
	}
	return f, nil
}

func htons(v uint16) uint16 { return v<<8 | v>>8 }

// openRaw opens an AF_PACKET socket bound to ifname that reads every
// frame arriving on it (not those sent from it) and waits at most 50 ms
// for one.
func openRaw(ifname string) (int, unix.SockaddrLinklayer, error) {
	var sa unix.SockaddrLinklayer
	fd, err := unix.Socket(unix.AF_PACKET, unix.SOCK_RAW|unix.SOCK_CLOEXEC, int(htons(unix.ETH_P_ALL)))
	if err != nil {
		return -1, sa, err
	}
	ifi, err := ifIndex(ifname)
	if err != nil {
		unix.Close(fd)
		return -1, sa, err
	}
	sa = unix.SockaddrLinklayer{Protocol: htons(unix.ETH_P_ALL), Ifindex: ifi, Halen: 6}
	if err := unix.Bind(fd, &sa); err != nil {
		unix.Close(fd)
		return -1, sa, fmt.Errorf("bind %s: %w", ifname, err)
	}
	tv := unix.NsecToTimeval(int64(50 * time.Millisecond))
	if err := unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv); err != nil {
		unix.Close(fd)
		return -1, sa, err
	}
	return fd, sa, nil
}

func (f *Forwarder) close() {
	for i, fd := range f.fd {
		if fd >= 0 {
			unix.Close(fd)
			f.fd[i] = -1
		}
	}
}

// Stop stops forwarding (frames still held are dropped and left out of
// the log) and returns the first error the forwarder met.
func (f *Forwarder) Stop() error {
	close(f.stop)
	f.wg.Wait()
	f.close()
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.err
}

// Log returns the log of direction dir (0: A to B, 1: B to A) in the
// order frames arrived; call it after Stop.
func (f *Forwarder) Log(dir int) []Hop {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.log[dir]
}

func (f *Forwarder) fail(err error) {
	f.mu.Lock()
	if f.err == nil {
		f.err = err
	}
	f.mu.Unlock()
}

// pending is a frame waiting for its release time.
type pending struct {
	at  time.Time
	seq int // arrival order, for ties
	hop int // index in the log
}

type queue []*pending

func (q queue) Len() int { return len(q) }
func (q queue) Less(i, j int) bool {
	if !q[i].at.Equal(q[j].at) {
		return q[i].at.Before(q[j].at)
	}
	return q[i].seq < q[j].seq
}
func (q queue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *queue) Push(x any)   { *q = append(*q, x.(*pending)) }
func (q *queue) Pop() any {
	old := *q
	x := old[len(old)-1]
	*q = old[:len(old)-1]
	return x
}

// receive reads the frames of direction dir, decides their fate and
// hands those to send on to send.
func (f *Forwarder) receive(dir int, ch chan<- *pending) {
	defer f.wg.Done()
	defer close(ch)
	imp := &f.imp[dir]
	rng := rand.New(rand.NewSource(imp.Seed))
	buf := make([]byte, 65536)
	var p decode.Packet
	n, seq := 0, 0
	for {
		select {
		case <-f.stop:
			return
		default:
		}
		m, from, err := unix.Recvfrom(f.fd[dir], buf, 0)
		if err == unix.EAGAIN || err == unix.EINTR {
			continue
		}
		if err != nil {
			f.fail(fmt.Errorf("forwarder: receive: %w", err))
			return
		}
		if ll, ok := from.(*unix.SockaddrLinklayer); ok && ll.Pkttype == unix.PACKET_OUTGOING {
			continue
		}
		now := time.Now()
		frame := bytes.Clone(buf[:m])
		p.Frame.Len = m
		decode.Decode(&p, frame, decode.LinkTypeEthernet)
		hop := Hop{Index: -1, Out: -1, Frame: frame, Received: now}
		delay := imp.Delay
		if imp.Jitter > 0 {
			delay += time.Duration(rng.Int63n(int64(2*imp.Jitter)+1)) - imp.Jitter
		}
		copies := 1
		if p.Encap == decode.EncapRoCEv2 {
			hop.Index = n
			switch {
			case imp.Drop[n]:
				hop.Dropped, copies = true, 0
			case imp.Dup[n]:
				copies = 2
			}
			delay += imp.Hold[n]
			n++
		}
		var queued []*pending
		f.mu.Lock()
		for c := range max(copies, 1) {
			h := hop
			h.Copy = c == 1
			f.log[dir] = append(f.log[dir], h)
			if copies > 0 {
				queued = append(queued, &pending{at: now.Add(delay), seq: seq, hop: len(f.log[dir]) - 1})
				seq++
			}
		}
		f.mu.Unlock()
		for _, x := range queued {
			ch <- x
		}
	}
}

// send sends the frames of direction dir on at their release times.
func (f *Forwarder) send(dir int, ch <-chan *pending) {
	defer f.wg.Done()
	var q queue
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	out := 1 - dir
	for {
		for q.Len() > 0 && !time.Now().Before(q[0].at) {
			x := heap.Pop(&q).(*pending)
			f.mu.Lock()
			h := &f.log[dir][x.hop]
			frame := h.Frame
			f.mu.Unlock()
			for {
				err := unix.Sendto(f.fd[out], frame, 0, &f.sa[out])
				if err == unix.ENOBUFS || err == unix.EAGAIN {
					select {
					case <-f.stop: // Stop does not wait on a full queue
						return
					case <-time.After(50 * time.Microsecond):
					}
					continue
				}
				if err != nil {
					f.fail(fmt.Errorf("forwarder: send: %w", err))
				}
				break
			}
			f.mu.Lock()
			h = &f.log[dir][x.hop]
			h.Out, h.Sent = f.sent[dir], time.Now()
			f.sent[dir]++
			f.mu.Unlock()
		}
		wait := time.Hour
		if q.Len() > 0 {
			wait = time.Until(q[0].at)
		}
		timer.Reset(wait)
		select {
		case x, ok := <-ch:
			if !ok {
				return
			}
			heap.Push(&q, x)
		case <-timer.C:
		case <-f.stop:
			return
		}
	}
}

// Responder answers frames arriving on an interface: a small stand-in
// for a responder HCA in tests.
type Responder struct {
	fd   int
	sa   unix.SockaddrLinklayer
	stop chan struct{}
	done chan error
}

// Respond starts answering on iface in namespace ns: for every frame
// arriving there, answer returns the frame to send back (nil: none).
// answer runs on one goroutine. Stop ends it.
func Respond(ns, iface string, answer func(frame []byte) []byte) (*Responder, error) {
	r := &Responder{stop: make(chan struct{}), done: make(chan error, 1)}
	err := Enter(ns, func() error {
		var err error
		r.fd, r.sa, err = openRaw(iface)
		return err
	})
	if err != nil {
		return nil, err
	}
	go func() {
		buf := make([]byte, 65536)
		for {
			select {
			case <-r.stop:
				r.done <- nil
				return
			default:
			}
			m, from, err := unix.Recvfrom(r.fd, buf, 0)
			if err == unix.EAGAIN || err == unix.EINTR {
				continue
			}
			if err != nil {
				r.done <- fmt.Errorf("responder: receive: %w", err)
				return
			}
			if ll, ok := from.(*unix.SockaddrLinklayer); ok && ll.Pkttype == unix.PACKET_OUTGOING {
				continue
			}
			if out := answer(buf[:m]); out != nil {
				if err := unix.Sendto(r.fd, out, 0, &r.sa); err != nil {
					r.done <- fmt.Errorf("responder: send: %w", err)
					return
				}
			}
		}
	}()
	return r, nil
}

// Stop stops answering and returns the first error met.
func (r *Responder) Stop() error {
	close(r.stop)
	err := <-r.done
	unix.Close(r.fd)
	return err
}

// Settle waits until no frame is held and none has arrived or been sent
// on for quiet (the traffic through the forwarder is over, and the last
// frame it sent is long in the receiver's capture ring), or until timeout.
func (f *Forwarder) Settle(quiet, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		f.mu.Lock()
		held, last := 0, time.Time{}
		for dir := range f.log {
			for i := range f.log[dir] {
				h := &f.log[dir][i]
				if !h.Dropped && h.Out < 0 {
					held++
				}
				for _, at := range []time.Time{h.Received, h.Sent} {
					if at.After(last) {
						last = at
					}
				}
			}
		}
		f.mu.Unlock()
		if held == 0 && time.Since(last) >= quiet {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("forwarder: %d frames still held, the last arrived or left %v ago, after %v", held, time.Since(last).Round(time.Millisecond), timeout)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
