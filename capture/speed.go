package capture

import "sync"

// ngOptIfSpeed is the pcapng Interface Description Block option if_speed:
// the interface's speed in bits/s, 8 bytes.
const ngOptIfSpeed = 8

// ifSpeeds holds the if_speed of each interface of the current pcapng
// section. The reader fills it while a tracker on another goroutine may
// ask (InterfaceSpeed), so it has its own lock; it is touched once per
// Interface Description Block and per port the tracker meets, never per
// packet.
type ifSpeeds struct {
	mu sync.Mutex
	v  []uint64
}

func (s *ifSpeeds) add(i int, speed uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if i == 0 {
		s.v = s.v[:0] // a new section numbers its interfaces from 0
	}
	s.v = append(s.v, speed)
}

// ngSpeed returns the if_speed option of an IDB's options, 0 when absent.
func (r *Reader) ngSpeed(opts []byte) uint64 {
	if v, ok := r.ngOption(opts, ngOptIfSpeed, 8); ok {
		return r.u64(v)
	}
	return 0
}

// InterfaceSpeed returns the speed in bits/s that the Interface
// Description Block of interface i gives (pcapng if_speed), 0 when it
// gives none (and for pcap and ERF files). Safe to call from another
// goroutine than the one reading.
func (r *Reader) InterfaceSpeed(i int) uint64 {
	r.speeds.mu.Lock()
	defer r.speeds.mu.Unlock()
	if i < 0 || i >= len(r.speeds.v) {
		return 0
	}
	return r.speeds.v[i]
}
