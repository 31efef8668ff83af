package stream

import (
	"io"
	"os"
	"runtime"
	"strconv"

	"github.com/rocetap/rocetap/decode"
	"github.com/rocetap/rocetap/decode/filter"
)

// Render appends one decoded packet's output to dst.
type Render func(dst []byte, p *decode.Packet) []byte

// ParallelOptions configure Parallel.
type ParallelOptions struct {
	Decoder *decode.Decoder
	// NewRender makes a worker's renderer (each worker gets its own:
	// printers keep scratch buffers).
	NewRender func() Render
	Filter    *filter.Filter // only matching packets are rendered
	Limit     int            // stop after this many packets rendered (0: all)
	Workers   int            // 0: one per CPU; ROCETAP_WORKERS=N overrides
	// Emit gets the output of each packet rendered, in capture order; i
	// counts them from 0.
	Emit func(i int, out []byte)
	// Flush, when set, is called after every batch of packets emitted;
	// its error stops the reading.
	Flush func() error
}

const (
	batchSize = 512
	inFlight  = 8 // batches being read, decoded or written at once
)

// batch is up to batchSize packets: their bytes in arena, their frames,
// and their rendered output (ends[i] is where packet i's ends).
type batch struct {
	n      int
	frames []decode.Frame
	spans  []span
	links  []decode.LinkType
	arena  []byte
	out    []byte
	ends   []int
	err    error // what ended the batch early (io.EOF at the end)
	ready  chan struct{}
}

type span struct{ off, end int }

func newBatches(withOutput bool) chan *batch {
	free := make(chan *batch, inFlight)
	for range inFlight {
		b := &batch{frames: make([]decode.Frame, batchSize), spans: make([]span, batchSize),
			links: make([]decode.LinkType, batchSize), ready: make(chan struct{}, 1)}
		if withOutput {
			b.ends = make([]int, batchSize)
		}
		free <- b
	}
	return free
}

// Parallel reads the source, decodes and renders its packets on one
// worker per CPU, and emits their outputs in capture order. It returns the
// number of packets emitted; a capture that stops part-way ends with a
// *CorruptError after every packet before it was emitted.
//
// The reader copies each packet's bytes out of the capture reader's
// reused buffer into its batch and builds its frame, which depends on the
// order; decoding and rendering are independent per packet and run in
// parallel; the emitter restores the order.
func (s *Source) Parallel(o ParallelOptions) (emitted int, err error) {
	workers := o.Workers
	if w, err := strconv.Atoi(os.Getenv("ROCETAP_WORKERS")); err == nil && w > 0 {
		workers = w
	}
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	free := newBatches(true)
	work := make(chan *batch, inFlight)
	order := make(chan *batch, inFlight)
	done := make(chan struct{})
	go s.readBatches(free, work, order, done)
	for range workers {
		render := o.NewRender()
		var flt *filter.Filter
		if o.Filter != nil {
			flt = o.Filter.Clone()
		}
		go func() {
			// One Packet per worker, reused: it stays in the cache.
			p := new(decode.Packet)
			for b := range work {
				b.out = b.out[:0]
				for i := 0; i < b.n; i++ {
					p.Frame = b.frames[i]
					sp := b.spans[i]
					o.Decoder.Decode(p, b.arena[sp.off:sp.end:sp.end], b.links[i])
					if flt == nil || flt.Match(p) {
						b.out = render(b.out, p)
					}
					b.ends[i] = len(b.out)
				}
				b.ready <- struct{}{}
			}
		}()
	}
	defer func() {
		close(done)
		for b := range order { // let the reader stop; workers finish their batch
			<-b.ready
		}
	}()
	for b := range order {
		<-b.ready
		start := 0
		for i := 0; i < b.n; i++ {
			end := b.ends[i]
			if end > start {
				o.Emit(emitted, b.out[start:end])
				emitted++
			}
			start = end
			if o.Limit > 0 && emitted >= o.Limit {
				return emitted, nil
			}
		}
		if o.Flush != nil {
			if err := o.Flush(); err != nil {
				return emitted, err
			}
		}
		if b.err != nil {
			if b.err == io.EOF {
				return emitted, nil
			}
			return emitted, b.err
		}
		free <- b
	}
	return emitted, nil
}

// readBatches fills batches from the source in order and hands each to
// the workers and, in the same order, to the consumer. The last batch
// carries what ended the source (io.EOF at its end). It returns when the
// source ends or done is closed.
func (s *Source) readBatches(free <-chan *batch, work, order chan<- *batch, done <-chan struct{}) {
	defer close(order)
	defer close(work)
	var b *batch
	next := func() bool {
		select {
		case b = <-free:
			b.n, b.err, b.arena = 0, nil, b.arena[:0]
			return true
		case <-done:
			return false
		}
	}
	send := func() bool {
		select {
		case order <- b:
		case <-done:
			return false
		}
		work <- b
		return true
	}
	if !next() {
		return
	}
	quit := false
	err := s.Read(func(pk *Packet) error {
		pk.SetFrame(&b.frames[b.n])
		b.spans[b.n] = span{len(b.arena), len(b.arena) + len(pk.Data)}
		b.links[b.n] = pk.Info.LinkType
		b.arena = append(b.arena, pk.Data...)
		b.n++
		if b.n == batchSize && (!send() || !next()) {
			quit = true
			return ErrStop
		}
		return nil
	})
	if quit {
		return
	}
	b.err = err
	if err == nil {
		b.err = io.EOF
	}
	send()
}
