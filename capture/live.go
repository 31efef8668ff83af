package capture

import (
	"errors"
	"fmt"
	"net"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gopacket/gopacket/layers"
)

// Live capture. A Backend opens a LiveSource on a network interface (or,
// with the libpcap backend, an RDMA sniffer device such as mlx5_0): Next
// blocks until a packet arrives and returns io.EOF once Stop was called
// and every packet already received was returned. The default backend is
// AF_PACKET with a TPACKET_V3 ring ("afpacket", Linux, no cgo); the
// optional "libpcap" backend is built with the libpcap build tag.

// LiveOptions configure a live capture.
type LiveOptions struct {
	// Interface to capture on (required).
	Interface string
	// Snaplen is the most bytes kept of each packet; 0 is DefaultSnaplen.
	Snaplen int
	// Promisc puts the interface in promiscuous mode for the capture (it
	// is restored when the capture ends).
	Promisc bool
	// BufferMiB is the kernel ring size in MiB; 0 is DefaultBufferMiB.
	BufferMiB int
	// Filter is a capture filter. "" is the built-in RoCE filter
	// (RoCEFilter): UDP destination port 4791 over IPv4 and IPv6, ethertype
	// 0x8915 (RoCEv1), with or without one 802.1Q tag, and with PFC true
	// MAC control frames (PFC and PAUSE). What else a backend accepts is
	// its own: see the backend's documentation.
	Filter string
	// PFC: the built-in filter also passes MAC control (PFC, PAUSE) frames.
	PFC bool
	// Ports are UDP destination ports the built-in filter passes besides
	// 4791 (RoCEv2 on a non-standard port, as decode -d configures).
	Ports []uint16
	// Backend names the backend ("afpacket", "libpcap"); "" chooses: the
	// default backend for network interfaces, libpcap (when built in) for
	// devices the default backend cannot open.
	Backend string
}

// Defaults of LiveOptions.
const (
	DefaultSnaplen   = 262144
	DefaultBufferMiB = 32
)

// LiveStats are the counters of a live capture. Received counts the
// packets the capture returned; KernelDrops the packets the kernel dropped
// because the ring was full (the reader was too slow); IfDrops the packets
// the interface dropped while the capture ran (before any filter, so not
// all of them were RoCE), when the backend can tell (HasIfDrops).
type LiveStats struct {
	Received    uint64
	Bytes       uint64 // bytes on the wire of the packets received
	KernelDrops uint64
	IfDrops     uint64
	HasIfDrops  bool
}

// LiveSource is a running live capture. Next and Close are called from
// one goroutine; Stats and Stop may be called from any goroutine, Stop
// any number of times.
type LiveSource interface {
	Source
	// Stats returns the counters so far.
	Stats() (LiveStats, error)
	// Stop ends the capture: Next returns the packets already received,
	// then io.EOF.
	Stop()
	// LinkType and Snaplen describe the packets (for a file's header).
	LinkType() layers.LinkType
	Snaplen() int
	// Interface is the name of what is captured on; Backend the backend's
	// name.
	Interface() string
	Backend() string
}

// Backend opens live captures.
type Backend interface {
	Name() string
	// Open starts a capture.
	Open(opts LiveOptions) (LiveSource, error)
	// Interfaces lists what the backend can capture on.
	Interfaces() ([]Interface, error)
}

// Interface is something a backend can capture on.
type Interface struct {
	Name        string
	Description string // addresses, "loopback", the driver's description, ...
	Up          bool
	Backend     string
}

var (
	backendsMu sync.Mutex
	backends   []Backend
)

// RegisterBackend makes a backend available to OpenLive. The backends of
// this package register themselves; the first registered is the default.
func RegisterBackend(b Backend) {
	backendsMu.Lock()
	defer backendsMu.Unlock()
	backends = append(backends, b)
}

// Backends lists the names of the registered backends, the default first.
func Backends() []string {
	backendsMu.Lock()
	defer backendsMu.Unlock()
	var out []string
	for _, b := range backends {
		out = append(out, b.Name())
	}
	return out
}

func backendByName(name string) (Backend, error) {
	backendsMu.Lock()
	defer backendsMu.Unlock()
	for _, b := range backends {
		if b.Name() == name {
			return b, nil
		}
	}
	if len(backends) == 0 {
		return nil, ErrNoBackend
	}
	names := make([]string, 0, len(backends))
	for _, b := range backends {
		names = append(names, b.Name())
	}
	hint := ""
	if name == "libpcap" {
		hint = " (the libpcap backend is built with `make build-libpcap`: go build -tags libpcap)"
	}
	return nil, fmt.Errorf("capture backend %q is not built in%s; this rocetap has: %s", name, hint, strings.Join(names, ", "))
}

// ErrNoBackend: this platform has no live capture backend.
var ErrNoBackend = errors.New("live capture is not supported on this platform (rocetap captures with AF_PACKET on Linux, or with libpcap when built with -tags libpcap)")

// OpenLive starts a live capture with the backend opts.Backend names, or
// the default one.
func OpenLive(opts LiveOptions) (LiveSource, error) {
	if opts.Interface == "" {
		return nil, errors.New("no interface given: name one with -i (rocetap capture -D lists them)")
	}
	if opts.Snaplen == 0 {
		opts.Snaplen = DefaultSnaplen
	}
	if opts.Snaplen < 64 || opts.Snaplen > DefaultSnaplen {
		return nil, fmt.Errorf("snapshot length %d: want 64 to %d bytes (a RoCE packet's headers need 64 bytes, and the file formats allow %d)", opts.Snaplen, DefaultSnaplen, DefaultSnaplen)
	}
	if opts.BufferMiB == 0 {
		opts.BufferMiB = DefaultBufferMiB
	}
	if opts.BufferMiB < 1 || opts.BufferMiB > 4096 {
		return nil, fmt.Errorf("ring buffer of %d MiB: want 1 to 4096", opts.BufferMiB)
	}
	name := opts.Backend
	if name == "" {
		bs := Backends()
		if len(bs) == 0 {
			return nil, ErrNoBackend
		}
		name = bs[0]
		// A device that is not a network interface (an RDMA sniffer such
		// as mlx5_0) is libpcap's, when it is built in.
		if _, err := net.InterfaceByName(opts.Interface); err != nil && slices.Contains(bs, "libpcap") {
			name = "libpcap"
		}
	}
	if name != "libpcap" {
		if _, err := net.InterfaceByName(opts.Interface); err != nil {
			if d, ok := rdmaDevice(opts.Interface); ok {
				return nil, &RDMADeviceError{Device: d}
			}
		}
	}
	b, err := backendByName(name)
	if err != nil {
		return nil, err
	}
	return b.Open(opts)
}

// ListInterfaces lists what every registered backend can capture on,
// sorted by name; an interface two backends offer is listed once, with the
// default backend.
func ListInterfaces() ([]Interface, error) {
	backendsMu.Lock()
	bs := slices.Clone(backends)
	backendsMu.Unlock()
	if len(bs) == 0 {
		return nil, ErrNoBackend
	}
	seen := map[string]bool{}
	var out []Interface
	var firstErr error
	for _, b := range bs {
		ifs, err := b.Interfaces()
		if err != nil {
			if firstErr == nil {
				firstErr = err
			}
			continue
		}
		for _, i := range ifs {
			if !seen[i.Name] {
				seen[i.Name] = true
				out = append(out, i)
			}
		}
	}
	if len(out) == 0 && firstErr != nil {
		return nil, firstErr
	}
	sort.Slice(out, func(a, b int) bool { return out[a].Name < out[b].Name })
	return out, nil
}

// UnknownInterfaceError says an interface does not exist and lists those
// that do.
type UnknownInterfaceError struct {
	Name      string
	Available []Interface
}

func (e *UnknownInterfaceError) Error() string {
	var names []string
	for _, i := range e.Available {
		names = append(names, i.Name)
	}
	if len(names) == 0 {
		return fmt.Sprintf("no interface %q (and none found to capture on)", e.Name)
	}
	return fmt.Sprintf("no interface %q; capture on one of: %s (rocetap capture -D describes them)", e.Name, strings.Join(names, ", "))
}

// PermissionError says capturing needs privileges the process lacks.
type PermissionError struct {
	Interface string
	Err       error
}

func (e *PermissionError) Error() string {
	return fmt.Sprintf("capture on %s needs CAP_NET_RAW: run as root or `sudo setcap cap_net_raw,cap_net_admin+eip $(which rocetap)` (%v)", e.Interface, e.Err)
}

func (e *PermissionError) Unwrap() error { return e.Err }

// liveStop is the Stop machinery the backends share: a channel closed
// once, and the time it was closed, so the packets received before it can
// still be returned.
type liveStop struct {
	once sync.Once
	ch   chan struct{}
	at   atomic.Int64 // UnixNano of the stop
}

func newLiveStop() liveStop { return liveStop{ch: make(chan struct{})} }

func (s *liveStop) stop() {
	s.once.Do(func() {
		s.at.Store(time.Now().UnixNano())
		close(s.ch)
	})
}

func (s *liveStop) stopped() bool {
	select {
	case <-s.ch:
		return true
	default:
		return false
	}
}

// after reports whether the capture was stopped before time t: a packet
// received after the stop ends the capture.
func (s *liveStop) after(t time.Time) bool {
	return s.stopped() && t.UnixNano() > s.at.Load()
}

// pollInterval is how often a blocked Next looks whether Stop was called.
const pollInterval = 50 * time.Millisecond
