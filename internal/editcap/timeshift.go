package editcap

import (
	"math"
	"time"
)

// shiftTimes moves each frame's timestamp t to t + shift + (t − t0)·ppm·1e-6,
// as a clock would stamp it that is shift ahead at t0 and gains ppm
// parts per million.
func shiftTimes(frames []Frame, t0 time.Time, shift time.Duration, ppm float64) {
	for i := range frames {
		t := frames[i].Info.Timestamp
		drift := time.Duration(math.Round(float64(t.Sub(t0)) * ppm * 1e-6))
		frames[i].Info.Timestamp = t.Add(shift + drift)
	}
}
