package cli

import (
	"errors"
	"io"
	"os"
	"runtime"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/rocetap/rocetap/capture"
	"github.com/rocetap/rocetap/decode"
	"github.com/rocetap/rocetap/decode/filter"
)

// A renderer appends one decoded packet's output to dst. Each worker gets
// its own (printers keep scratch buffers).
type renderer func(dst []byte, p *decode.Packet) []byte

// pipelineOptions configure runPipeline.
type pipelineOptions struct {
	newRender func() renderer
	skipCRCs  bool           // no output depends on the ICRC/VCRC check
	filter    *filter.Filter // -Y: only matching packets are rendered
	closing   func(n int)    // writes what follows the last packet (JSON's "]")
	limit     int            // stop after this many packets (0: all)
	sep       []byte         // written between two packets' outputs (JSON's ",\n")
	workers   int            // 0: one per CPU
}

const (
	batchSize = 512
	inFlight  = 8 // batches being read, decoded or written at once
)

// batch is up to batchSize packets: their bytes in arena, their decoded
// form, and their rendered output (ends[i] is where packet i's ends).
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

// runPipeline reads the capture, decodes and renders packets on one
// worker per CPU, and writes the outputs in file order to out. A corrupt
// file ends with an exit status 2 error after every packet before it was
// written.
//
// The reader copies each packet's bytes out of the capture reader's
// reused buffer into its batch, and fills in the frame numbers and times,
// which depend on the order; decoding and rendering are independent per
// packet and run in parallel; the writer restores the order.
func runPipeline(o *readOptions, ios IO, po pipelineOptions, out *outBuf) (written int, err error) {
	dec, r, prog, closeInput, err := openInput(o, ios, po.skipCRCs)
	if err != nil {
		return 0, err
	}
	defer closeInput()
	workers := po.workers
	if w, err := strconv.Atoi(os.Getenv("ROCETAP_WORKERS")); err == nil && w > 0 {
		workers = w
	}
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	free := make(chan *batch, inFlight)
	work := make(chan *batch, inFlight)
	order := make(chan *batch, inFlight)
	done := make(chan struct{})
	for range inFlight {
		free <- &batch{frames: make([]decode.Frame, batchSize), spans: make([]span, batchSize),
			links: make([]decode.LinkType, batchSize), ends: make([]int, batchSize), ready: make(chan struct{}, 1)}
	}
	go readBatches(r, prog, free, work, order, done)
	for range workers {
		render := po.newRender()
		var flt *filter.Filter
		if po.filter != nil {
			flt = po.filter.Clone()
		}
		go func() {
			// One Packet per worker, reused: it stays in the cache.
			p := new(decode.Packet)
			for b := range work {
				b.out = b.out[:0]
				for i := 0; i < b.n; i++ {
					p.Frame = b.frames[i]
					s := b.spans[i]
					dec.Decode(p, b.arena[s.off:s.end:s.end], b.links[i])
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
				if written > 0 && po.sep != nil {
					out.b = append(out.b, po.sep...)
				}
				out.b = append(out.b, b.out[start:end]...)
				written++
			}
			start = end
			if po.limit > 0 && written >= po.limit {
				return written, nil
			}
		}
		out.maybeFlush()
		if out.err != nil {
			return written, out.err
		}
		if b.err != nil {
			if b.err == io.EOF {
				return written, nil
			}
			return written, &exitError{code: 2, err: b.err}
		}
		free <- b
	}
	return written, nil
}

// readBatches fills batches from the capture in order, hands each to the
// workers and, in the same order, to the writer.
func readBatches(r *capture.Reader, prog *progress, free <-chan *batch, work, order chan<- *batch, done <-chan struct{}) {
	defer close(order)
	defer close(work)
	var first, prev time.Time
	n := 0
	for {
		var b *batch
		select {
		case b = <-free:
		case <-done:
			return
		}
		b.n, b.err, b.arena = 0, nil, b.arena[:0]
		for b.n < batchSize {
			data, info, err := r.Next()
			if err != nil {
				b.err = err
				break
			}
			n++
			if n == 1 {
				first, prev = info.Timestamp, info.Timestamp
			}
			b.frames[b.n] = decode.Frame{
				Number:       n,
				Time:         info.Timestamp,
				TimeRelative: info.Timestamp.Sub(first),
				TimeDelta:    info.Timestamp.Sub(prev),
				Len:          info.Length,
				Interface:    info.InterfaceIndex,
			}
			prev = info.Timestamp
			b.spans[b.n] = span{len(b.arena), len(b.arena) + len(data)}
			b.links[b.n] = info.LinkType
			b.arena = append(b.arena, data...)
			b.n++
		}
		if prog != nil {
			prog.update(r.Offset(), n)
		}
		select {
		case order <- b:
		case <-done:
			return
		}
		work <- b
		if b.err != nil {
			return
		}
	}
}

// readOptions say which capture to read and how to decode it.
type readOptions struct {
	Path   string   // -r: file, or "-" for stdin
	Format string   // --format: "" (detect), pcap, pcapng, erf
	Decode []string // -d udp.port==N,infiniband
}

// decoder builds the Decoder for -d options.
func (o *readOptions) decoder() (*decode.Decoder, error) {
	ports, err := decodeAsPorts(o.Decode)
	if err != nil {
		return nil, err
	}
	return decode.NewDecoder(ports...), nil
}

// decodeAsPorts parses the -d options: the extra UDP ports carrying RoCEv2.
func decodeAsPorts(decodeAs []string) ([]uint16, error) {
	var ports []uint16
	for _, d := range decodeAs {
		rest, ok := cutPrefix(d, "udp.port==")
		var port uint64
		var err error
		if ok {
			num, proto, _ := cut(rest, ",")
			if proto != "" && proto != "infiniband" && proto != "roce" && proto != "rocev2" {
				return nil, errors.New("-d " + strconv.Quote(d) + ": rocetap decodes only InfiniBand over UDP; write -d udp.port==" + num + ",infiniband")
			}
			port, err = strconv.ParseUint(num, 10, 16)
		}
		if !ok || err != nil || port == 0 {
			return nil, errors.New("-d " + strconv.Quote(d) + ": want udp.port==PORT,infiniband (e.g. -d udp.port==4792,infiniband)")
		}
		ports = append(ports, uint16(port))
	}
	return ports, nil
}

func cutPrefix(s, p string) (string, bool) {
	if len(s) >= len(p) && s[:len(p)] == p {
		return s[len(p):], true
	}
	return s, false
}

func cut(s, sep string) (string, string, bool) {
	for i := 0; i+len(sep) <= len(s); i++ {
		if s[i:i+len(sep)] == sep {
			return s[:i], s[i+len(sep):], true
		}
	}
	return s, "", false
}

// openCapture opens -r (or stdin for "-").
func openCapture(o *readOptions, ios IO) (*capture.Reader, int64, error) {
	if o.Path == "" {
		return nil, 0, errors.New("no capture given: use -r FILE (or -r - to read a pcap/pcapng stream from stdin)")
	}
	if o.Path == "-" {
		r, err := capture.NewReaderFormat(ios.In, o.Format)
		return r, 0, err
	}
	var size int64
	if st, err := os.Stat(o.Path); err == nil {
		size = st.Size()
	}
	r, err := capture.OpenFormat(o.Path, o.Format)
	return r, size, err
}

// openInput builds the decoder for -d, opens -r and, on a terminal,
// starts the progress line; closeInput stops both.
func openInput(o *readOptions, ios IO, skipCRCs bool) (dec *decode.Decoder, r *capture.Reader, prog *progress, closeInput func(), err error) {
	dec, err = o.decoder()
	if err != nil {
		return nil, nil, nil, nil, err
	}
	dec.SkipCRCs = skipCRCs
	r, size, err := openCapture(o, ios)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	if ios.ErrIsTerminal && size > 0 {
		prog = startProgress(ios.ErrOut, size)
	}
	return dec, r, prog, func() {
		if prog != nil {
			prog.stop()
		}
		r.Close()
	}, nil
}

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
