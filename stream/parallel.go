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
	// counts them from 0. It is needed even with EmitInline: the
	// reader/worker pipeline renders apart and calls Emit.
	Emit func(i int, out []byte)
	// EmitInline, when set, takes Emit's place on one goroutine (Emit is
	// then not called): it renders packet i itself (with render, onto
	// the end of its own output), so that the bytes are not rendered
	// into a scratch buffer and copied. decode -T fields of four BTH fields on the bench's
	// main capture took 0.141 CPU s with it against 0.146 (one core),
	// 0.140 against 0.144 (both cores; medians of 15 interleaved runs).
	EmitInline func(i int, render Render, p *decode.Packet)
	// Flush, when set, is called after every batch of packets emitted;
	// its error stops the reading.
	Flush func() error
	// Inline reads, decodes, renders and emits each packet in turn on the
	// caller's goroutine, as with one P: for a live source, whose packets
	// must be printed as they come, not when a batch is full.
	Inline bool
}

// minParallelProcs: with this many Ps or fewer, Parallel and Track run
// on one goroutine. Measured on 2 cores (bench/RESULTS.md, 5 interleaved
// runs, 1M packets): the reader/worker pipeline gave the same wall time
// as one goroutine (decode -T fields with the ICRC 0.241 s vs 0.244 s,
// stats 0.279 s vs 0.283 s) for 41-53% more CPU (0.368 vs 0.240, 0.399 vs
// 0.282 CPU s), and was slower whenever the other core was busy: the
// hand-offs and the cache misses of data read on the other core cost what
// the second core gives. From 3 Ps on, the pipeline runs.
//
// With 2 Ps and ROCETAP_READAHEAD=1 (off by default: see readAhead),
// what runs on the second core instead is the capture reader's read-ahead
// (capture.Reader.ReadAhead): read(2)'s copy, or decompression, into 2 MiB buffers
// that this goroutine then parses in place, nothing copied or batched.
// Measured on 2 cores (1M packets, bench/run.sh's main capture, 9
// interleaved runs each of taskset -c 0 and all cores; median (min-max)
// wall s): with the machine nearly idle (load 1.0), all cores against
// one: stats 0.317 (0.269-0.399) vs 0.367 (0.351-0.394), sessions 0.295
// vs 0.365, expert 0.312 vs 0.368, decode 0.537 vs 0.623, 14-19% faster
// (without read-ahead all cores gave 0.353, 0.348, 0.352, 0.611), for
// 8-15% more CPU s (stats 0.422 vs 0.366, decode 0.670 vs 0.623): a
// hand-off wakes a thread on the other core, and data read there comes
// from its cache. With a busy loop on the second core: stats 0.365 vs
// 0.363, decode 0.630 vs 0.604 (7 runs; without read-ahead 0.342, 0.607).
// Under load 4 from other jobs the medians were within the noise of one
// core's, above or below.
const minParallelProcs = 2

const (
	batchSize = 512
	inFlight  = 8 // batches being read, decoded or written at once
)

// batch is up to batchSize packets: their bytes (data), their frames,
// and their rendered output (ends[i] is where packet i's ends). The bytes
// of a file or stream's packets stay in the capture reader's buffers,
// which the batch holds (bufs) until it is read again; a live capture's
// are copied into arena.
type batch struct {
	n      int
	frames []decode.Frame
	data   [][]byte
	links  []decode.LinkType
	bufs   []*readBuf
	spans  []span // live capture: data[i] is arena[spans[i]] once full
	arena  []byte
	out    []byte
	ends   []int
	err    error // what ended the batch early (io.EOF at the end)
	ready  chan struct{}
}

type span struct{ off, end int }

// readBuf is a buffer of the capture reader (capture.Reader.KeepBuffers):
// refs counts the batches holding packets in it, plus one while the
// reader reads into it. Only the reader goroutine touches it.
type readBuf struct {
	data []byte
	refs int
}

func newBatches(withOutput bool) chan *batch {
	free := make(chan *batch, inFlight)
	for range inFlight {
		b := &batch{frames: make([]decode.Frame, batchSize), data: make([][]byte, batchSize),
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
// With one or two Ps (minParallelProcs) and no ROCETAP_WORKERS, it
// reads, decodes, renders and emits each packet in
// turn on the caller's goroutine (parallelInline): goroutines that take
// turns on one core only add hand-offs, and a packet decoded as soon as
// it is read is still in the cache. On the 1 KiB mix this cut decode
// -T fields from 0.223 to 0.201 CPU s a million packets.
//
// The reader hands out batches of packets whose bytes stay in the capture
// reader's buffers (a live capture's are copied) and builds their frames,
// which depend on the order; decoding and rendering are independent per
// packet and run in parallel; the emitter restores the order.
func (s *Source) Parallel(o ParallelOptions) (emitted int, err error) {
	workers := o.Workers
	if w, err := strconv.Atoi(os.Getenv("ROCETAP_WORKERS")); err == nil && w > 0 {
		workers = w
	}
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	if o.Inline || runtime.GOMAXPROCS(0) <= minParallelProcs && os.Getenv("ROCETAP_WORKERS") == "" {
		return s.parallelInline(&o)
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
					o.Decoder.Decode(p, b.data[i], b.links[i])
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

// parallelInline is Parallel on one goroutine, for one P: each packet is
// decoded and rendered as soon as it is read, with no batch, no copy and
// no hand-off. Flush is called after every batchSize packets read, as
// Parallel calls it after every batch.
func (s *Source) parallelInline(o *ParallelOptions) (emitted int, err error) {
	render := o.NewRender()
	p := new(decode.Packet)
	var out []byte
	read, stopped := 0, false
	err = s.Read(func(pk *Packet) error {
		pk.SetFrame(&p.Frame)
		o.Decoder.Decode(p, pk.Data, pk.Info.LinkType)
		if o.Filter == nil || o.Filter.Match(p) {
			if o.EmitInline != nil {
				o.EmitInline(emitted, render, p)
			} else {
				out = render(out[:0], p)
				o.Emit(emitted, out)
			}
			emitted++
			if o.Limit > 0 && emitted >= o.Limit {
				stopped = true
				return ErrStop
			}
		}
		if read++; read == batchSize && o.Flush != nil {
			read = 0
			return o.Flush()
		}
		return nil
	})
	if err != nil || stopped {
		return emitted, err
	}
	if o.Flush != nil {
		err = o.Flush()
	}
	return emitted, err
}

// readBatches fills batches from the source in order and hands each to
// the workers and, in the same order, to the consumer. The last batch
// carries what ended the source (io.EOF at its end). It returns when the
// source ends or done is closed.
//
// A file or stream's packets are not copied: the capture reader reads
// into buffers of its own (readBuf) and the batches hold on to them until
// they come back on free. Copying each packet into its batch cost a
// quarter of this goroutine's time on 1 KiB packets.
func (s *Source) readBatches(free <-chan *batch, work, order chan<- *batch, done <-chan struct{}) {
	defer close(order)
	defer close(work)
	var (
		b    *batch
		pool []*readBuf // buffers no batch holds
		cur  *readBuf   // the buffer the reader reads into
		last *readBuf   // the last buffer b holds
	)
	release := func(rb *readBuf) {
		if rb.refs--; rb.refs == 0 {
			pool = append(pool, rb)
		}
	}
	if s.r != nil {
		cur = &readBuf{refs: 1}
		s.r.KeepBuffers(func(old []byte) []byte {
			cur.data = old
			release(cur)
			if n := len(pool); n > 0 && len(pool[n-1].data) >= len(old) {
				cur, pool = pool[n-1], pool[:n-1]
			} else {
				cur = &readBuf{data: make([]byte, len(old))}
			}
			cur.refs = 1
			return cur.data
		})
		defer s.r.KeepBuffers(nil)
	}
	next := func() bool {
		select {
		case b = <-free:
			for _, rb := range b.bufs {
				release(rb)
			}
			clear(b.bufs)
			b.n, b.err, b.bufs, b.arena, last = 0, nil, b.bufs[:0], b.arena[:0], nil
			return true
		case <-done:
			return false
		}
	}
	send := func() bool {
		if cur == nil { // a live capture's: the arena is full now
			for i, sp := range b.spans[:b.n] {
				b.data[i] = b.arena[sp.off:sp.end:sp.end]
			}
		}
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
		b.links[b.n] = pk.Info.LinkType
		if cur != nil {
			if last != cur {
				cur.refs++
				b.bufs = append(b.bufs, cur)
				last = cur
			}
			b.data[b.n] = pk.Data
		} else {
			if b.spans == nil {
				b.spans = make([]span, batchSize)
			}
			b.spans[b.n] = span{len(b.arena), len(b.arena) + len(pk.Data)}
			b.arena = append(b.arena, pk.Data...)
		}
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
