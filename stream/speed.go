package stream

// InterfaceSpeed returns the speed in bits/s the capture file gives
// capture interface i (pcapng if_speed), 0 when it gives none or the
// source is live. Safe to call while another goroutine reads.
func (s *Source) InterfaceSpeed(i int) uint64 {
	if s.r == nil {
		return 0
	}
	return s.r.InterfaceSpeed(i)
}
