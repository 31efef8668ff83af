//go:build linux

package capture

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gopacket/gopacket/afpacket"
	"github.com/gopacket/gopacket/layers"
	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// The AF_PACKET backend: a TPACKET_V3 memory-mapped ring
// (github.com/gopacket/gopacket/afpacket), pure Go. The kernel runs the
// capture filter, whose return value is also the snapshot length. It
// captures on Ethernet interfaces (and loopback); the filter is the
// built-in RoCE filter, or a compiled classic BPF program (tcpdump -ddd
// output): it cannot compile pcap filter expressions, which the libpcap
// backend does.
type afpacketBackend struct{}

func init() { RegisterBackend(afpacketBackend{}) }

func (afpacketBackend) Name() string { return "afpacket" }

// Interfaces lists the network interfaces, with their addresses.
func (afpacketBackend) Interfaces() ([]Interface, error) {
	ifs, err := net.Interfaces()
	if err != nil {
		return nil, fmt.Errorf("listing network interfaces: %w", err)
	}
	out := make([]Interface, 0, len(ifs))
	for _, i := range ifs {
		var desc []string
		if i.Flags&net.FlagLoopback != 0 {
			desc = append(desc, "loopback")
		}
		if addrs, err := i.Addrs(); err == nil {
			for _, a := range addrs {
				desc = append(desc, a.String())
			}
		}
		out = append(out, Interface{Name: i.Name, Description: strings.Join(desc, ", "), Up: i.Flags&net.FlagUp != 0, Backend: "afpacket"})
	}
	return out, nil
}

// ARPHRD values of /sys/class/net/IF/type this backend captures on.
const (
	arphrdEther    = 1
	arphrdLoopback = 772
)

// afpacket ring geometry.
const (
	afFrameSize    = 1 << 12
	afBlockSize    = 1 << 20 // holds a packet of the largest snapshot length
	afBlockTimeout = 10 * time.Millisecond
)

func (b afpacketBackend) Open(o LiveOptions) (LiveSource, error) {
	iface, err := net.InterfaceByName(o.Interface)
	if err != nil {
		avail, _ := b.Interfaces()
		return nil, &UnknownInterfaceError{Name: o.Interface, Available: avail}
	}
	hw, hwErr := hardwareType(o.Interface)
	if hwErr == nil && hw != arphrdEther && hw != arphrdLoopback {
		return nil, fmt.Errorf("interface %s has hardware type %d, not Ethernet: the afpacket backend captures on Ethernet interfaces (RoCE); for other devices build the libpcap backend (make build-libpcap) and use --backend libpcap", o.Interface, hw)
	}
	var prog []bpf.RawInstruction
	switch o.Filter {
	case "":
		prog, err = RoCEFilter(o.PFC, o.Ports...)
	default:
		prog, err = ParseBPF(o.Filter)
		if err != nil {
			err = fmt.Errorf("capture filter %q: the afpacket backend takes compiled BPF only (give `tcpdump -ddd 'EXPR' | paste -sd,`), or build the libpcap backend (make build-libpcap), which compiles filter expressions: %w", o.Filter, err)
		}
	}
	if err != nil {
		return nil, err
	}
	SetSnaplen(prog, uint32(o.Snaplen))
	if hwErr == nil && hw == arphrdLoopback {
		// On loopback the kernel hands a packet socket every packet
		// twice, outgoing and incoming; keep the incoming copy, as
		// libpcap does (pcap-linux.c skips PACKET_OUTGOING on lo).
		prog = append(skipOutgoing(), prog...)
	}
	blocks := max(2, o.BufferMiB<<20/afBlockSize)
	tp, err := afpacket.NewTPacket(
		afpacket.OptInterface(o.Interface),
		afpacket.TPacketVersion3,
		afpacket.OptFrameSize(afFrameSize),
		afpacket.OptBlockSize(afBlockSize),
		afpacket.OptNumBlocks(blocks),
		afpacket.OptBlockTimeout(afBlockTimeout),
		afpacket.OptPollTimeout(pollInterval),
		afpacket.OptAddVLANHeader(true),
	)
	if err != nil {
		if errors.Is(err, unix.EPERM) || errors.Is(err, unix.EACCES) {
			return nil, &PermissionError{Interface: o.Interface, Err: err}
		}
		return nil, fmt.Errorf("opening an AF_PACKET ring of %d MiB on %s: %w", blocks*afBlockSize>>20, o.Interface, err)
	}
	l := &afLive{tp: tp, opts: o, ifIndex: iface.Index, stop: newLiveStop()}
	if err := tp.SetBPF(prog); err != nil {
		tp.Close()
		return nil, fmt.Errorf("attaching the capture filter on %s: %w", o.Interface, err)
	}
	// Packets that reached the ring before the filter was attached are
	// skipped: the capture starts now.
	l.start = time.Now()
	if o.Promisc {
		if err := tp.SetPromiscuous(true); err != nil {
			tp.Close()
			return nil, fmt.Errorf("promiscuous mode on %s: %w", o.Interface, err)
		}
	}
	// The interface's drop counter, from /proc/net/dev as this thread's
	// network namespace shows it: the file stays bound to the namespace.
	if f, err := os.Open("/proc/thread-self/net/dev"); err == nil {
		if n, err := rxDropped(f, o.Interface); err == nil {
			l.netdev, l.ifDrop0 = f, n
		} else {
			f.Close()
		}
	}
	return l, nil
}

// afLive is a running AF_PACKET capture.
type afLive struct {
	tp       *afpacket.TPacket
	opts     LiveOptions
	ifIndex  int
	start    time.Time
	stop     liveStop
	received atomic.Uint64
	bytes    atomic.Uint64
	netdev   *os.File // /proc/net/dev, nil when unreadable
	ifDrop0  uint64
	closed   atomic.Bool
	mu       sync.Mutex // Stats against Close
}

func (l *afLive) LinkType() layers.LinkType { return layers.LinkTypeEthernet }
func (l *afLive) Snaplen() int              { return l.opts.Snaplen }
func (l *afLive) Interface() string         { return l.opts.Interface }
func (l *afLive) Backend() string           { return "afpacket" }
func (l *afLive) Stop()                     { l.stop.stop() }

// Next returns the next packet; after Stop, the packets the ring received
// before it, then io.EOF.
func (l *afLive) Next() ([]byte, PacketInfo, error) {
	if l.closed.Load() {
		return nil, PacketInfo{}, errClosed
	}
	for {
		data, ci, err := l.tp.ZeroCopyReadPacketData()
		switch {
		case err == nil:
		case errors.Is(err, afpacket.ErrTimeout):
			if l.stop.stopped() {
				return nil, PacketInfo{}, io.EOF
			}
			continue
		case errors.Is(err, unix.EINTR):
			continue
		default:
			return nil, PacketInfo{}, l.nextError(err)
		}
		if ci.Timestamp.Before(l.start) {
			continue
		}
		if l.stop.after(ci.Timestamp) {
			return nil, PacketInfo{}, io.EOF
		}
		l.received.Add(1)
		l.bytes.Add(uint64(ci.Length))
		return data, PacketInfo{Timestamp: ci.Timestamp, CaptureLength: len(data), Length: max(ci.Length, len(data)), LinkType: layers.LinkTypeEthernet}, nil
	}
}

// Stats: Received and Bytes are the packets Next returned; KernelDrops the
// socket's drop count (packets the filter kept that found the ring full);
// IfDrops the interface's rx_dropped counter since the capture started.
func (l *afLive) Stats() (LiveStats, error) {
	st := LiveStats{Received: l.received.Load(), Bytes: l.bytes.Load()}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed.Load() {
		return st, errClosed
	}
	_, v3, err := l.tp.SocketStats()
	if err != nil {
		return st, fmt.Errorf("reading the capture statistics of %s: %w", l.opts.Interface, err)
	}
	st.KernelDrops = uint64(v3.Drops())
	if l.netdev != nil {
		if n, err := rxDropped(l.netdev, l.opts.Interface); err == nil && n >= l.ifDrop0 {
			st.IfDrops, st.HasIfDrops = n-l.ifDrop0, true
		}
	}
	return st, nil
}

func (l *afLive) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.closed.Swap(true) {
		l.stop.stop()
		l.tp.Close()
		if l.netdev != nil {
			l.netdev.Close()
		}
	}
	return nil
}

// hardwareType returns the interface's ARPHRD type (SIOCGIFHWADDR), in
// the calling thread's network namespace.
func hardwareType(iface string) (uint16, error) {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return 0, err
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq(iface)
	if err != nil {
		return 0, err
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFHWADDR, ifr); err != nil {
		return 0, err
	}
	return ifr.Uint16(), nil
}

// rxDropped reads the interface's receive drop count from /proc/net/dev
// (f, read again from its start).
func rxDropped(f *os.File, iface string) (uint64, error) {
	b := make([]byte, 64<<10)
	n, err := f.ReadAt(b, 0)
	if err != nil && !errors.Is(err, io.EOF) {
		return 0, err
	}
	for _, line := range strings.Split(string(b[:n]), "\n") {
		name, rest, ok := strings.Cut(line, ":")
		if !ok || strings.TrimSpace(name) != iface {
			continue
		}
		// receive: bytes packets errs drop ...
		f := strings.Fields(rest)
		if len(f) < 4 {
			break
		}
		return strconv.ParseUint(f[3], 10, 64)
	}
	return 0, fmt.Errorf("no %s in /proc/net/dev", iface)
}

// nextError says why the ring stopped: most often the interface went
// away (deleted, its namespace removed), which the ring reports only as
// "packet poll failed".
func (l *afLive) nextError(err error) error {
	// /proc/net/dev as the capture's namespace shows it (the file opened
	// when the capture started), else this thread's.
	var gone bool
	l.mu.Lock()
	if l.netdev != nil {
		_, derr := rxDropped(l.netdev, l.opts.Interface)
		gone = derr != nil && strings.HasPrefix(derr.Error(), "no ")
	} else if i, ierr := net.InterfaceByIndex(l.ifIndex); ierr != nil || i.Name != l.opts.Interface {
		gone = true
	}
	l.mu.Unlock()
	if gone {
		return fmt.Errorf("capturing on %s: the interface went away (deleted or renamed) during the capture: the packets received before it were kept (%v)", l.opts.Interface, err)
	}
	return fmt.Errorf("capturing on %s: %w", l.opts.Interface, err)
}
