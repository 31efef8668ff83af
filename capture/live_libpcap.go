//go:build libpcap && cgo

package capture

import (
	"errors"
	"fmt"
	"io"
	"net"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcap"
)

// The libpcap backend (built with -tags libpcap, cgo and the system's
// libpcap: make build-libpcap). It opens anything libpcap can: network
// interfaces, the "any" device, and RDMA sniffer devices such as mlx5_0
// when the system's libpcap was built with RDMA support (libibverbs).
// Options map onto libpcap's: Snaplen (pcap_set_snaplen), Promisc
// (pcap_set_promisc), BufferMiB (pcap_set_buffer_size). Immediate mode is
// off: packets are delivered in blocks, at the latest after the read
// timeout (50 ms). With it on, libpcap 1.10 on Linux uses a TPACKET_V2
// ring of fixed slots, one per packet, each as large as the largest frame
// the interface can pass up, 64 KiB when it has offloads (GRO, TSO: most
// NICs, and veth): the default 32 MiB then held 512 packets (measured on
// veth) and a burst of 4000 lost 1488; TPACKET_V3 blocks hold tens of
// thousands.
//
// Filter is a pcap filter expression (man pcap-filter), compiled by
// libpcap for the device's link type. An empty Filter is the built-in
// RoCE filter as an expression (RoCEFilterExpr, with PFC and Ports). On
// Ethernet it must compile. On other link types (Linux cooked capture on
// "any", raw IP, InfiniBand, ...) the backend tries the expression, then
// its untagged part alone (libpcap has no VLAN tests for cooked
// captures), then the UDP port test alone, and when none compiles it
// captures everything rather than fail (InfiniBand: libpcap cannot filter
// it). Which one applies is neither an error nor printed: lpLive's Filter
// method says. An RDMA sniffer device (mlx5_0) has the Ethernet link type
// on a RoCE port, where the full filter applies (libpcap runs it in user
// space), and InfiniBand on an InfiniBand port, where it captures
// everything.
//
// It registers after the afpacket backend (init functions run in file
// name order), so AF_PACKET stays the default and libpcap is chosen by
// name or for devices that are not network interfaces (see OpenLive).
type libpcapBackend struct{}

func init() { RegisterBackend(libpcapBackend{}) }

func (libpcapBackend) Name() string { return "libpcap" }

// pcap_findalldevs flags (pcap/pcap.h).
const (
	lpIfLoopback     = 0x01
	lpIfUp           = 0x02
	lpIfRunning      = 0x04
	lpIfWireless     = 0x08
	lpIfStatusMask   = 0x30
	lpIfDisconnected = 0x20
)

// Interfaces lists the devices libpcap finds (pcap_findalldevs), with
// libpcap's description, flags and addresses.
func (libpcapBackend) Interfaces() ([]Interface, error) {
	devs, err := pcap.FindAllDevs()
	if err != nil {
		return nil, fmt.Errorf("listing capture devices with libpcap: %w", err)
	}
	out := make([]Interface, 0, len(devs))
	for _, d := range devs {
		var desc []string
		if d.Description != "" {
			desc = append(desc, d.Description)
		}
		if d.Flags&lpIfLoopback != 0 {
			desc = append(desc, "loopback")
		}
		if d.Flags&lpIfWireless != 0 {
			desc = append(desc, "wireless")
		}
		if d.Flags&lpIfUp != 0 && d.Flags&lpIfRunning == 0 {
			desc = append(desc, "not running")
		}
		if d.Flags&lpIfStatusMask == lpIfDisconnected {
			desc = append(desc, "disconnected")
		}
		for _, a := range d.Addresses {
			if ones, bits := a.Netmask.Size(); bits == 8*len(a.IP) && bits > 0 {
				desc = append(desc, fmt.Sprintf("%s/%d", a.IP, ones))
			} else {
				desc = append(desc, a.IP.String())
			}
		}
		out = append(out, Interface{Name: d.Name, Description: strings.Join(desc, ", "), Up: d.Flags&lpIfUp != 0, Backend: "libpcap"})
	}
	return out, nil
}

// lpOpenMu serializes activation: gopacket's pcap keeps the message of a
// failed activation in a package variable.
var lpOpenMu sync.Mutex

func (b libpcapBackend) Open(o LiveOptions) (LiveSource, error) {
	if o.Snaplen == 0 {
		o.Snaplen = DefaultSnaplen
	}
	if o.BufferMiB == 0 {
		o.BufferMiB = DefaultBufferMiB
	}
	lpOpenMu.Lock()
	defer lpOpenMu.Unlock()
	in, err := pcap.NewInactiveHandle(o.Interface)
	if err != nil {
		return nil, fmt.Errorf("libpcap cannot capture on %s: %w", o.Interface, err)
	}
	defer in.CleanUp() // a no-op once activated
	for _, set := range []struct {
		what string
		err  error
	}{
		{"snapshot length", in.SetSnapLen(o.Snaplen)},
		{"promiscuous mode", in.SetPromisc(o.Promisc)},
		{"read timeout", in.SetTimeout(pollInterval)},
		{"buffer size", in.SetBufferSize(o.BufferMiB << 20)},
		{"immediate mode", in.SetImmediateMode(false)},
	} {
		if set.err != nil {
			return nil, fmt.Errorf("libpcap on %s: setting the %s: %w", o.Interface, set.what, set.err)
		}
	}
	h, err := in.Activate()
	if err != nil {
		return nil, b.activateError(o, err, in.Error())
	}
	dlt := int(h.LinkType())
	l := &lpLive{h: h, opts: o, dlt: dlt, linkType: lpLinkType(dlt), snaplen: h.SnapLen(), stop: newLiveStop()}
	// libpcap counts interface drops on Linux network interfaces in
	// promiscuous mode only (from /proc/net/dev), and never on RDMA
	// sniffer devices.
	_, ifErr := net.InterfaceByName(o.Interface)
	l.hasIfDrops = runtime.GOOS == "linux" && o.Promisc && ifErr == nil
	if err := l.setFilter(); err != nil {
		h.Close()
		return nil, err
	}
	return l, nil
}

// activateError explains why pcap_activate failed: err is gopacket's
// status, msg libpcap's message (pcap_geterr).
func (b libpcapBackend) activateError(o LiveOptions, err, msg error) error {
	// err's texts are gopacket's (pcap.activateError, unexported) for
	// pcap_activate's statuses; the tests pin the two that matter.
	detail := err.Error()
	if msg != nil && msg.Error() != "" {
		detail = msg.Error()
	}
	status := err.Error()
	perm := status == "Permission Denied" || strings.Contains(detail, "Operation not permitted") ||
		strings.Contains(detail, "You don't have permission") || strings.Contains(detail, "Permission denied")
	// An unknown device comes first: without privileges libpcap fails on
	// the socket before it looks at the device.
	if status == "No Such Device" || perm && !lpKnownDevice(o.Interface) {
		avail, _ := b.Interfaces()
		return &UnknownInterfaceError{Name: o.Interface, Available: avail}
	}
	switch {
	case perm:
		return &PermissionError{Interface: o.Interface, Err: fmt.Errorf("libpcap: %s", detail)}
	case status == "Interface Not Up":
		return fmt.Errorf("%s is down: bring it up (ip link set %s up) and capture again (libpcap: %s)", o.Interface, o.Interface, detail)
	case status == "Cannot set as promisc":
		return fmt.Errorf("%s has no promiscuous mode: capture without it (libpcap: %s)", o.Interface, detail)
	}
	return fmt.Errorf("libpcap cannot capture on %s: %s", o.Interface, detail)
}

// lpKnownDevice reports whether libpcap lists the device or it is a
// network interface.
func lpKnownDevice(name string) bool {
	if _, err := net.InterfaceByName(name); err == nil {
		return true
	}
	devs, err := pcap.FindAllDevs()
	if err != nil {
		return true // cannot tell: do not claim it is missing
	}
	for _, d := range devs {
		if d.Name == name {
			return true
		}
	}
	return false
}

// setFilter compiles and attaches the capture filter (see libpcapBackend).
func (l *lpLive) setFilter() error {
	if l.opts.Filter != "" {
		if err := l.h.SetBPFFilter(l.opts.Filter); err != nil {
			return fmt.Errorf("capture filter %q on %s (link type %s): libpcap says: %v (the syntax is in `man pcap-filter`)", l.opts.Filter, l.opts.Interface, pcap.DatalinkValToName(l.dlt), err)
		}
		l.filter = l.opts.Filter
		return nil
	}
	full := RoCEFilterExpr(l.opts.PFC, l.opts.Ports...)
	err := l.h.SetBPFFilter(full)
	if err == nil {
		l.filter = full
		return nil
	}
	if l.linkType == layers.LinkTypeEthernet {
		return fmt.Errorf("the built-in RoCE filter %q does not compile for %s: libpcap says: %v", full, l.opts.Interface, err)
	}
	// Linux cooked captures have no VLAN tests; InfiniBand has nothing
	// libpcap can filter on.
	for _, expr := range []string{roceTerms(l.opts.PFC, l.opts.Ports...), udpPortsExpr(l.opts.Ports...)} {
		if l.h.SetBPFFilter(expr) == nil {
			l.filter = expr
			return nil
		}
	}
	return nil
}

// lpLinkType is the LINKTYPE_ value (what files and PacketInfo carry) of a
// libpcap DLT_ value (what pcap_datalink returns): they differ for a few
// old link types, of which Linux gives raw IP (tun devices).
func lpLinkType(dlt int) layers.LinkType {
	if dlt == 12 { // DLT_RAW everywhere but OpenBSD
		return layers.LinkTypeRaw
	}
	return layers.LinkType(dlt)
}

// lpLive is a running libpcap capture.
type lpLive struct {
	h        *pcap.Handle
	opts     LiveOptions
	dlt      int             // pcap_datalink
	linkType layers.LinkType // its LINKTYPE_ value
	snaplen  int
	filter   string // the pcap expression applied; "" is none

	stop       liveStop
	stopAt     atomic.Int64 // UnixNano of the first Stop
	received   atomic.Uint64
	bytes      atomic.Uint64
	hasIfDrops bool
	done       bool // Next returned io.EOF
	closed     atomic.Bool
	mu         sync.Mutex // Stats against Close
}

func (l *lpLive) LinkType() layers.LinkType { return l.linkType }
func (l *lpLive) Snaplen() int              { return l.snaplen }
func (l *lpLive) Interface() string         { return l.opts.Interface }
func (l *lpLive) Backend() string           { return "libpcap" }

// Filter is the pcap filter expression the capture applies, "" when it
// keeps every packet (see libpcapBackend).
func (l *lpLive) Filter() string { return l.filter }

// Stop ends the capture; it may be called from any goroutine.
func (l *lpLive) Stop() {
	l.stopAt.CompareAndSwap(0, time.Now().UnixNano())
	l.stop.stop()
}

// lpDrainLimit bounds how long Next returns packets after Stop, should
// the packets' timestamps not tell (a clock that jumped back).
const lpDrainLimit = time.Second

// Next returns the next packet; after Stop, the packets received before
// Stop (by their timestamps) that libpcap still holds, then io.EOF. A
// blocked Next sees Stop within pollInterval, the read timeout.
func (l *lpLive) Next() ([]byte, PacketInfo, error) {
	if l.closed.Load() {
		return nil, PacketInfo{}, errClosed
	}
	for !l.done {
		start := time.Now()
		data, ci, err := l.h.ZeroCopyReadPacketData()
		stopAt := l.stopAt.Load()
		switch {
		case err == nil:
			if stopAt != 0 && (ci.Timestamp.UnixNano() > stopAt || time.Since(time.Unix(0, stopAt)) > lpDrainLimit) {
				l.done = true
				continue
			}
			l.received.Add(1)
			l.bytes.Add(uint64(ci.Length))
			return data, PacketInfo{Timestamp: ci.Timestamp, CaptureLength: len(data), Length: max(ci.Length, len(data)), LinkType: l.linkType}, nil
		case errors.Is(err, pcap.NextErrorTimeoutExpired):
			if stopAt != 0 {
				l.done = true
			} else if time.Since(start) < time.Millisecond {
				// A device without a selectable descriptor times out at
				// once: do not spin.
				time.Sleep(time.Millisecond)
			}
		case errors.Is(err, io.EOF):
			l.done = true
		default:
			if msg := l.h.Error(); msg != nil && msg.Error() != "" {
				err = fmt.Errorf("%w: %v", err, msg)
			}
			return nil, PacketInfo{}, fmt.Errorf("capturing on %s with libpcap: %w", l.opts.Interface, err)
		}
	}
	return nil, PacketInfo{}, io.EOF
}

// Stats: Received and Bytes are the packets Next returned; KernelDrops
// libpcap's ps_drop (packets the filter kept that found the buffer full);
// IfDrops its ps_ifdrop (the interface's drops since the capture started,
// its rx_dropped counter), which libpcap counts on Linux network
// interfaces in promiscuous mode only: HasIfDrops says when. Stats may be
// called from any goroutine (libpcap allows pcap_stats during a read:
// tcpdump calls it from a signal handler).
func (l *lpLive) Stats() (LiveStats, error) {
	st := LiveStats{Received: l.received.Load(), Bytes: l.bytes.Load()}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed.Load() {
		return st, errClosed
	}
	ps, err := l.h.Stats()
	if err != nil {
		return st, fmt.Errorf("reading the capture statistics of %s (pcap_stats): %w", l.opts.Interface, err)
	}
	st.KernelDrops = uint64(uint32(ps.PacketsDropped))
	if l.hasIfDrops {
		st.IfDrops = uint64(uint32(ps.PacketsIfDropped))
		st.HasIfDrops = true
	}
	return st, nil
}

func (l *lpLive) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.closed.Swap(true) {
		l.Stop()
		l.h.Close()
	}
	return nil
}
