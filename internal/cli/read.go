package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/rocetap/rocetap/capture"
	"github.com/rocetap/rocetap/decode"
)

// readOptions say which capture to read and how to decode it.
type readOptions struct {
	Path   string   // -r: file, or "-" for stdin
	Format string   // --format: "" (detect), pcap, pcapng, erf
	Decode []string // -d udp.port==N,infiniband
}

// decoder builds the Decoder for -d options.
func (o *readOptions) decoder() (*decode.Decoder, error) {
	var ports []uint16
	for _, d := range o.Decode {
		// tshark syntax: udp.port==4792,infiniband
		var port uint64
		var err error
		rest, ok := cutPrefix(d, "udp.port==")
		if ok {
			num, proto, _ := cut(rest, ",")
			if proto != "" && proto != "infiniband" && proto != "roce" && proto != "rocev2" {
				return nil, fmt.Errorf("-d %q: rocetap decodes only InfiniBand over UDP; write -d udp.port==%s,infiniband", d, num)
			}
			port, err = strconv.ParseUint(num, 10, 16)
		}
		if !ok || err != nil || port == 0 {
			return nil, fmt.Errorf("-d %q: want udp.port==PORT,infiniband (e.g. -d udp.port==4792,infiniband)", d)
		}
		ports = append(ports, uint16(port))
	}
	return decode.NewDecoder(ports...), nil
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

// packetLoop reads every packet, decodes it and calls fn with it, in file
// order. It stops early when fn returns errStop. A corrupt file ends the
// loop with an exit status 2 error after fn has seen every good packet.
//
// Reading and decoding run on one goroutine and fn on the caller's, so
// decoding and printing use two cores. Packets travel in batches whose
// bytes are copied out of the reader's reused buffer.
func packetLoop(o *readOptions, ios IO, fn func(p *decode.Packet) error) error {
	dec, err := o.decoder()
	if err != nil {
		return err
	}
	r, size, err := openCapture(o, ios)
	if err != nil {
		return err
	}
	defer r.Close()
	var prog *progress
	if ios.ErrIsTerminal && size > 0 {
		prog = startProgress(ios.ErrOut, size)
		defer prog.stop()
	}

	free := make(chan *batch, numBatches)
	full := make(chan *batch, numBatches)
	done := make(chan struct{})
	for range numBatches {
		free <- &batch{pkts: make([]decode.Packet, batchSize)}
	}
	go produce(r, dec, prog, free, full, done)
	defer func() {
		close(done)
		for range full { // let the producer finish
		}
	}()
	for b := range full {
		for i := 0; i < b.n; i++ {
			if err := fn(&b.pkts[i]); err != nil {
				if err == errStop {
					return nil
				}
				return err
			}
		}
		if b.err != nil {
			if b.err == io.EOF {
				return nil
			}
			return &exitError{code: 2, err: b.err}
		}
		free <- b
	}
	return nil
}

const (
	batchSize  = 256
	numBatches = 4
)

// batch is up to batchSize decoded packets, their bytes in arena, and the
// error (io.EOF at the end) that followed them.
type batch struct {
	pkts  []decode.Packet
	n     int
	arena []byte
	err   error
}

func produce(r *capture.Reader, dec *decode.Decoder, prog *progress, free <-chan *batch, full chan<- *batch, done <-chan struct{}) {
	defer close(full)
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
		// Copy the batch's bytes first: slices into the arena stay valid
		// only once it has stopped growing.
		type span struct{ off, end int }
		var spans [batchSize]span
		var infos [batchSize]capture.PacketInfo
		for b.n < batchSize {
			data, info, err := r.Next()
			if err != nil {
				b.err = err
				break
			}
			spans[b.n] = span{len(b.arena), len(b.arena) + len(data)}
			infos[b.n] = info
			b.arena = append(b.arena, data...)
			b.n++
		}
		for i := 0; i < b.n; i++ {
			n++
			info := &infos[i]
			if n == 1 {
				first, prev = info.Timestamp, info.Timestamp
			}
			p := &b.pkts[i]
			p.Frame = decode.Frame{
				Number:       n,
				Time:         info.Timestamp,
				TimeRelative: info.Timestamp.Sub(first),
				TimeDelta:    info.Timestamp.Sub(prev),
				Len:          info.Length,
				Interface:    info.InterfaceIndex,
			}
			prev = info.Timestamp
			dec.Decode(p, b.arena[spans[i].off:spans[i].end:spans[i].end], info.LinkType)
		}
		if prog != nil {
			prog.update(r.Offset(), n)
		}
		select {
		case full <- b:
		case <-done:
			return
		}
		if b.err != nil {
			return
		}
	}
}

var errStop = errors.New("stop")

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
				fmt.Fprint(p.w, "\r\033[K")
			}
			return
		case <-t.C:
			off, n := p.off.Load(), p.pkts.Load()
			el := time.Since(p.start).Seconds()
			if off <= 0 || el <= 0 {
				continue
			}
			left := time.Duration(float64(p.total-off) / (float64(off) / el) * float64(time.Second)).Round(time.Second)
			fmt.Fprintf(p.w, "\r\033[K%3d%%  %s of %s  %d packets  %.0f packets/s  %s left",
				off*100/p.total, mb(off), mb(p.total), n, float64(n)/el, left)
			shown = true
		}
	}
}

func (p *progress) stop() {
	close(p.done)
	<-p.finished
}

func mb(n int64) string { return strconv.FormatFloat(float64(n)/1e6, 'f', 1, 64) + " MB" }
