package stream

import (
	"io"
	"strconv"
	"sync/atomic"
	"time"
)

// progress prints "bytes of total, packets/s, time left" on a terminal.
type progress struct {
	w         io.Writer
	total     int64
	off, pkts atomic.Int64
	done      chan struct{}
	finished  chan struct{}
	start     time.Time
}

func startProgress(w io.Writer, total int64) *progress {
	p := &progress{w: w, total: total, done: make(chan struct{}), finished: make(chan struct{}), start: time.Now()}
	go p.run()
	return p
}

func (p *progress) update(off int64, n int) {
	p.off.Store(off)
	p.pkts.Store(int64(n))
}

func (p *progress) run() {
	defer close(p.finished)
	t := time.NewTicker(500 * time.Millisecond)
	defer t.Stop()
	shown := false
	for {
		select {
		case <-p.done:
			if shown {
				io.WriteString(p.w, "\r\033[K")
			}
			return
		case <-t.C:
			off, n := p.off.Load(), p.pkts.Load()
			el := time.Since(p.start).Seconds()
			if off <= 0 || el <= 0 {
				continue
			}
			left := time.Duration(float64(p.total-off) / (float64(off) / el) * float64(time.Second)).Round(time.Second)
			io.WriteString(p.w, "\r\033[K"+strconv.FormatInt(off*100/p.total, 10)+"%  "+mb(off)+" of "+mb(p.total)+"  "+
				strconv.Itoa(int(n))+" packets  "+strconv.FormatFloat(float64(n)/el, 'f', 0, 64)+" packets/s  "+left.String()+" left")
			shown = true
		}
	}
}

func (p *progress) stop() {
	close(p.done)
	<-p.finished
}

func mb(n int64) string { return strconv.FormatFloat(float64(n)/1e6, 'f', 1, 64) + " MB" }
