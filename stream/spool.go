package stream

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/rocetap/rocetap/capture"
)

// Spool is a capture that a goroutine of its own writes to a temporary
// file as it comes, a stream from a pipe or a live capture, so that it can
// be read as it grows (ReadAt with the spool) and read again at random.
type Spool struct {
	path string
	dir  string
	done chan struct{} // closed when the writer has finished
	err  error         // what ended the writing early; set before done closes
	live capture.LiveSource
}

// newSpool creates the temporary file name, for what, in a directory of
// its own.
func newSpool(name, what string) (*Spool, *os.File, error) {
	dir, err := os.MkdirTemp("", "rocetap-tui-")
	if err != nil {
		return nil, nil, fmt.Errorf("a temporary file for the %s: %w", what, err)
	}
	path := filepath.Join(dir, name)
	f, err := os.Create(path)
	if err != nil {
		os.RemoveAll(dir)
		return nil, nil, err
	}
	return &Spool{path: path, dir: dir, done: make(chan struct{})}, f, nil
}

// SpoolStream copies the stream in (a pcap or pcapng stream, standard
// input) to a spool file named stdin.cap, until in ends. A read or write
// error stops the copy; readers of the spool get it after the bytes
// copied before it.
func SpoolStream(in io.Reader) (*Spool, error) { return SpoolStreamAs(in, "stdin.cap") }

// SpoolStreamAs is SpoolStream to a spool file called name (a base name:
// the TUI shows it), such as a compressed file's name without its suffix.
func SpoolStreamAs(in io.Reader, name string) (*Spool, error) {
	name = filepath.Base(name)
	if name == "." || name == "/" || name == ".." {
		name = "stdin.cap"
	}
	sp, f, err := newSpool(name, "stream")
	if err != nil {
		return nil, err
	}
	go func() {
		defer close(sp.done)
		n, err := io.Copy(f, in)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			sp.err = fmt.Errorf("the stream stopped after %d bytes: %w", n, err)
		}
	}()
	return sp, nil
}

// SpoolLive writes the packets of a live capture to a pcap spool file
// named live.pcap until the capture is stopped (Close). The spool owns
// live: Close stops and closes it. A capture or write error stops the
// capture; readers of the spool get it after the packets written before
// it.
func SpoolLive(live capture.LiveSource) (*Spool, error) {
	sp, f, err := newSpool("live.pcap", "live capture")
	if err != nil {
		live.Close()
		return nil, err
	}
	// Unbuffered: a reader of the spool sees each packet as it comes.
	w, err := capture.NewPcapWriter(f, live.LinkType(), live.Snaplen(), true)
	if err != nil {
		f.Close()
		live.Close()
		os.RemoveAll(sp.dir)
		return nil, err
	}
	sp.live = live
	go func() {
		defer close(sp.done)
		n := 0
		// Write and close errors are *os.PathError: they name the spool.
		err := Live(live).Read(func(pk *Packet) error {
			if err := w.WritePacket(pk.Info, pk.Data); err != nil {
				return err
			}
			n = pk.Number
			return nil
		})
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			live.Stop()
			sp.err = fmt.Errorf("the live capture stopped after %d packets: %w", n, err)
		}
	}()
	return sp, nil
}

// Path is the spool file's path.
func (sp *Spool) Path() string { return sp.path }

// Done is closed when the writer has finished.
func (sp *Spool) Done() <-chan struct{} { return sp.done }

// Err is what ended the writing early (nil while it runs, and after a
// stream's end or a live capture's Stop).
func (sp *Spool) Err() error {
	select {
	case <-sp.done:
		return sp.err
	default:
		return nil
	}
}

// Close stops a live capture, waits until its packets are written and
// closes it, then removes the spool. A stream's copy is not waited for
// (its pipe may never end).
func (sp *Spool) Close() error {
	if sp.live != nil {
		sp.live.Stop()
		<-sp.done
		sp.live.Close()
	}
	return os.RemoveAll(sp.dir)
}

// follow reads a spool that grows until its writer has finished. idle,
// when set, is called before each wait for more.
type follow struct {
	f    io.ReaderAt
	sp   *Spool
	off  int64
	idle func()
}

func (r *follow) Read(p []byte) (int, error) {
	for {
		n, err := r.f.ReadAt(p, r.off)
		r.off += int64(n)
		if n > 0 || !errors.Is(err, io.EOF) {
			if errors.Is(err, io.EOF) {
				err = nil
			}
			return n, err
		}
		if r.idle != nil {
			r.idle()
		}
		select {
		case <-r.sp.done:
			// One last look: the writer may have written before closing.
			if n, err := r.f.ReadAt(p, r.off); n > 0 {
				r.off += int64(n)
				return n, nil
			} else if err != nil && !errors.Is(err, io.EOF) {
				return 0, err
			}
			if r.sp.err != nil {
				return 0, r.sp.err
			}
			return 0, io.EOF
		case <-time.After(20 * time.Millisecond):
		}
	}
}
