//go:build libpcap && cgo

package capture

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcap"
	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// The libpcap backend's tests. Those that capture need root: they make
// two network namespaces joined by a veth pair, capture on one end and
// send from the other, so nothing outside the namespaces is touched.

// lpVM runs RoCEFilter as the kernel would (x/net/bpf's VM).
func lpVM(t *testing.T, pfc bool, ports ...uint16) *bpf.VM {
	t.Helper()
	raw, err := RoCEFilter(pfc, ports...)
	if err != nil {
		t.Fatal(err)
	}
	ins, ok := bpf.Disassemble(raw)
	if !ok {
		t.Fatal("RoCEFilter does not disassemble")
	}
	vm, err := bpf.NewVM(ins)
	if err != nil {
		t.Fatal(err)
	}
	return vm
}

// lpMatcher compiles RoCEFilterExpr with libpcap for Ethernet.
func lpMatcher(t *testing.T, pfc bool, ports ...uint16) *pcap.BPF {
	t.Helper()
	expr := RoCEFilterExpr(pfc, ports...)
	m, err := pcap.NewBPF(layers.LinkTypeEthernet, DefaultSnaplen, expr)
	if err != nil {
		t.Fatalf("libpcap does not compile %q: %v", expr, err)
	}
	return m
}

// TestLibpcapRoCEExprCaptures compiles the RoCE filter expression with
// libpcap and checks that it keeps exactly the Ethernet frames of the
// captures in testdata that RoCEFilter, our hand-assembled program, keeps:
// libpcap's compiler is an independent oracle for it.
func TestLibpcapRoCEExprCaptures(t *testing.T) {
	files, _ := filepath.Glob("../testdata/rxe/*.pcap")
	synth, _ := filepath.Glob("../testdata/synth/*.pcap*")
	files = append(files, synth...)
	if len(files) < 10 {
		t.Fatalf("found only %d captures in testdata", len(files))
	}
	for _, cfg := range []struct {
		pfc   bool
		ports []uint16
	}{{false, nil}, {true, nil}, {false, []uint16{4792, 4793}}} {
		pfc := cfg.pfc
		vm, lp := lpVM(t, pfc, cfg.ports...), lpMatcher(t, pfc, cfg.ports...)
		var kept, dropped, truncated int
		for _, f := range files {
			r, err := Open(f)
			if err != nil {
				t.Fatal(err)
			}
			for n := 1; ; n++ {
				data, info, err := r.Next()
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					t.Fatalf("%s: %v", f, err)
				}
				if info.LinkType != layers.LinkTypeEthernet {
					continue
				}
				if info.CaptureLength < info.Length {
					truncated++ // a test beyond the snapshot: the two may reject at different points
					continue
				}
				v, err := vm.Run(data)
				if err != nil {
					t.Fatalf("%s frame %d: %v", f, n, err)
				}
				want := v != 0
				got := lp.Matches(gopacket.CaptureInfo{CaptureLength: len(data), Length: info.Length}, data)
				if got != want {
					t.Errorf("pfc %v: %s frame %d: libpcap's %q keeps=%v, RoCEFilter keeps=%v", pfc, filepath.Base(f), n, RoCEFilterExpr(pfc, cfg.ports...), got, want)
				}
				if want {
					kept++
				} else {
					dropped++
				}
			}
			r.Close()
		}
		if kept < 500 || dropped == 0 {
			t.Errorf("pfc %v, ports %v: %d frames kept, %d dropped: the captures do not exercise both verdicts", pfc, cfg.ports, kept, dropped)
		}
		t.Logf("pfc %v, extra ports %v: %d files; libpcap and RoCEFilter agree on %d kept and %d dropped frames (%d truncated skipped)", pfc, cfg.ports, len(files), kept, dropped, truncated)
	}
}

// lpEth builds an Ethernet frame.
func lpEth(dst, src net.HardwareAddr, etherType uint16, body ...[]byte) []byte {
	b := make([]byte, 0, 128)
	b = append(b, dst...)
	b = append(b, src...)
	b = binary.BigEndian.AppendUint16(b, etherType)
	for _, x := range body {
		b = append(b, x...)
	}
	for len(b) < 60 {
		b = append(b, 0)
	}
	return b
}

// lpPayload is n patterned bytes (a BTH and what follows), so a frame
// that comes back altered shows it.
func lpPayload(seed byte, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = seed + byte(i*7)
	}
	return b
}

func lpIPv4UDP(dport uint16, fragOff uint16, ihl int, payload []byte) []byte {
	h := make([]byte, ihl*4+8)
	h[0] = 0x40 | byte(ihl)
	binary.BigEndian.PutUint16(h[2:], uint16(len(h)+len(payload)))
	binary.BigEndian.PutUint16(h[6:], fragOff)
	h[8], h[9] = 64, 17
	copy(h[12:], []byte{10, 0, 0, 1, 10, 0, 0, 2})
	u := h[ihl*4:]
	binary.BigEndian.PutUint16(u[0:], 49152)
	binary.BigEndian.PutUint16(u[2:], dport)
	binary.BigEndian.PutUint16(u[4:], uint16(8+len(payload)))
	return append(h, payload...)
}

func lpIPv6UDP(next byte, dport uint16, payload []byte) []byte {
	h := make([]byte, 48)
	h[0], h[6], h[7] = 0x60, next, 64
	binary.BigEndian.PutUint16(h[4:], uint16(8+len(payload)))
	h[23], h[39] = 1, 2
	binary.BigEndian.PutUint16(h[40:], 49152)
	binary.BigEndian.PutUint16(h[42:], dport)
	binary.BigEndian.PutUint16(h[44:], uint16(8+len(payload)))
	return append(h, payload...)
}

// lpTag is a VLAN tag (TCI vid) followed by the inner ethertype.
func lpTag(vid, inner uint16) []byte {
	return binary.BigEndian.AppendUint16(binary.BigEndian.AppendUint16(nil, vid), inner)
}

var (
	lpDst = net.HardwareAddr{0x02, 0, 0, 0, 0, 1}
	lpSrc = net.HardwareAddr{0x02, 0, 0, 0, 0, 2}
	// lpPFCDst is the MAC control multicast address PFC and PAUSE go to.
	lpPFCDst = net.HardwareAddr{0x01, 0x80, 0xc2, 0, 0, 0x01}
)

// TestLibpcapRoCEExprFrames: cases the captures do not hold, including
// the one where libpcap knowingly differs (a 0x9100 tag).
func TestLibpcapRoCEExprFrames(t *testing.T) {
	bth := lpPayload(1, 16)
	pfcBody := []byte{0x01, 0x01, 0x00, 0x08, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}
	tests := []struct {
		name       string
		b          []byte
		pfc        bool
		ports      []uint16
		libpcapToo bool // libpcap keeps it although RoCEFilter does not
	}{
		{name: "IPv4 UDP 4791", b: lpEth(lpDst, lpSrc, 0x0800, lpIPv4UDP(4791, 0, 5, bth))},
		{name: "IPv4 options, UDP 4791", b: lpEth(lpDst, lpSrc, 0x0800, lpIPv4UDP(4791, 0, 7, bth))},
		{name: "IPv4 first fragment", b: lpEth(lpDst, lpSrc, 0x0800, lpIPv4UDP(4791, 0x2000, 5, bth))},
		{name: "IPv4 later fragment", b: lpEth(lpDst, lpSrc, 0x0800, lpIPv4UDP(4791, 0x0010, 5, bth))},
		{name: "IPv4 UDP 53", b: lpEth(lpDst, lpSrc, 0x0800, lpIPv4UDP(53, 0, 5, bth))},
		{name: "IPv6 UDP 4791", b: lpEth(lpDst, lpSrc, 0x86dd, lpIPv6UDP(17, 4791, bth))},
		{name: "IPv6 hop-by-hop first", b: lpEth(lpDst, lpSrc, 0x86dd, lpIPv6UDP(0, 4791, bth))},
		{name: "802.1Q IPv4 UDP 4791", b: lpEth(lpDst, lpSrc, 0x8100, lpTag(100, 0x0800), lpIPv4UDP(4791, 0, 5, bth))},
		{name: "802.1ad IPv6 UDP 4791", b: lpEth(lpDst, lpSrc, 0x88a8, lpTag(100, 0x86dd), lpIPv6UDP(17, 4791, bth))},
		{name: "802.1Q UDP 53", b: lpEth(lpDst, lpSrc, 0x8100, lpTag(100, 0x0800), lpIPv4UDP(53, 0, 5, bth))},
		{name: "802.1Q RoCEv1", b: lpEth(lpDst, lpSrc, 0x8100, lpTag(7, 0x8915), bth)},
		{name: "two tags", b: lpEth(lpDst, lpSrc, 0x88a8, lpTag(1, 0x8100), lpTag(2, 0x0800), lpIPv4UDP(4791, 0, 5, bth))},
		{name: "RoCEv1", b: lpEth(lpDst, lpSrc, 0x8915, bth)},
		{name: "ARP", b: lpEth(lpDst, lpSrc, 0x0806, make([]byte, 28))},
		{name: "PFC", b: lpEth(lpPFCDst, lpSrc, 0x8808, pfcBody)},
		{name: "PFC with pfc", b: lpEth(lpPFCDst, lpSrc, 0x8808, pfcBody), pfc: true},
		{name: "802.1Q PFC with pfc", b: lpEth(lpPFCDst, lpSrc, 0x8100, lpTag(3, 0x8808), pfcBody), pfc: true},
		{name: "IPv4 UDP 4792", b: lpEth(lpDst, lpSrc, 0x0800, lpIPv4UDP(4792, 0, 5, bth))},
		{name: "IPv4 UDP 4792, extra port", b: lpEth(lpDst, lpSrc, 0x0800, lpIPv4UDP(4792, 0, 5, bth)), ports: []uint16{4792}},
		{name: "IPv6 UDP 4793, extra ports", b: lpEth(lpDst, lpSrc, 0x86dd, lpIPv6UDP(17, 4793, bth)), ports: []uint16{4792, 4793}},
		{name: "802.1Q UDP 4793, extra ports", b: lpEth(lpDst, lpSrc, 0x8100, lpTag(9, 0x0800), lpIPv4UDP(4793, 0, 5, bth)), ports: []uint16{4792, 4793}},
		{name: "IPv4 UDP 4791, extra ports", b: lpEth(lpDst, lpSrc, 0x0800, lpIPv4UDP(4791, 0, 5, bth)), ports: []uint16{4792}},
		{name: "IPv4 UDP 4794, extra ports", b: lpEth(lpDst, lpSrc, 0x0800, lpIPv4UDP(4794, 0, 5, bth)), ports: []uint16{4792, 4793}},
		{name: "0x9100 tag, UDP 4791", b: lpEth(lpDst, lpSrc, 0x9100, lpTag(100, 0x0800), lpIPv4UDP(4791, 0, 5, bth)), libpcapToo: true},
	}
	var kept int
	for _, tt := range tests {
		v, err := lpVM(t, tt.pfc, tt.ports...).Run(tt.b)
		if err != nil {
			t.Fatal(err)
		}
		want := v != 0
		if want {
			kept++
		}
		got := lpMatcher(t, tt.pfc, tt.ports...).Matches(gopacket.CaptureInfo{CaptureLength: len(tt.b), Length: len(tt.b)}, tt.b)
		if tt.libpcapToo {
			if want || !got {
				t.Errorf("%s: RoCEFilter keeps=%v, libpcap keeps=%v; documented: only libpcap keeps it", tt.name, want, got)
			}
			continue
		}
		if got != want {
			t.Errorf("%s: libpcap keeps=%v, RoCEFilter keeps=%v", tt.name, got, want)
		}
	}
	t.Logf("%d frames, %d kept by both", len(tests), kept)
}

// TestLibpcapBackendOrder: libpcap registers, and AF_PACKET stays the
// default on Linux.
func TestLibpcapBackendOrder(t *testing.T) {
	bs := Backends()
	if !slices.Contains(bs, "libpcap") {
		t.Fatalf("backends %v: libpcap is not registered", bs)
	}
	if runtime.GOOS == "linux" && (len(bs) < 2 || bs[0] != "afpacket") {
		t.Fatalf("backends %v: want afpacket first (the default), then libpcap", bs)
	}
	t.Logf("backends: %v; %s", bs, pcap.Version())
}

// lpOfflineLive is an lpLive on a capture file's handle of the link type
// lt, enough to compile filters without a device.
func lpOfflineLive(t *testing.T, lt uint32, o LiveOptions) *lpLive {
	t.Helper()
	hdr := make([]byte, 24)
	binary.LittleEndian.PutUint32(hdr[0:], 0xa1b2c3d4)
	binary.LittleEndian.PutUint16(hdr[4:], 2)
	binary.LittleEndian.PutUint16(hdr[6:], 4)
	binary.LittleEndian.PutUint32(hdr[16:], DefaultSnaplen)
	binary.LittleEndian.PutUint32(hdr[20:], lt)
	path := filepath.Join(t.TempDir(), fmt.Sprintf("lt%d.pcap", lt))
	if err := os.WriteFile(path, hdr, 0o644); err != nil {
		t.Fatal(err)
	}
	h, err := pcap.OpenOffline(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.Close)
	dlt := int(h.LinkType())
	if o.Interface == "" {
		o.Interface = "test0"
	}
	return &lpLive{h: h, opts: o, dlt: dlt, linkType: lpLinkType(dlt)}
}

// TestLibpcapFilterChoice: which filter each link type gets, and the
// error a bad expression gives.
func TestLibpcapFilterChoice(t *testing.T) {
	tests := []struct {
		name     string
		linkType uint32
		o        LiveOptions
		want     string // the filter applied
		wantErr  []string
	}{
		{name: "Ethernet", linkType: 1, want: RoCEFilterExpr(false)},
		{name: "Ethernet, PFC", linkType: 1, o: LiveOptions{PFC: true}, want: RoCEFilterExpr(true)},
		{name: "Ethernet, extra ports", linkType: 1, o: LiveOptions{Ports: []uint16{4792, 4793}}, want: RoCEFilterExpr(false, 4792, 4793)},
		{name: "Ethernet, expression", linkType: 1, o: LiveOptions{Filter: "udp port 4791 and host 10.0.0.1"}, want: "udp port 4791 and host 10.0.0.1"},
		{name: "Linux cooked: no VLAN tests", linkType: 113, want: roceTerms(false)},
		{name: "Linux cooked v2, PFC", linkType: 276, o: LiveOptions{PFC: true}, want: roceTerms(true)},
		{name: "raw IP", linkType: 101, want: roceTerms(false)},
		{name: "Linux cooked, extra port", linkType: 113, o: LiveOptions{Ports: []uint16{4792}}, want: roceTerms(false, 4792)},
		{name: "InfiniBand: nothing", linkType: 247, want: ""},
		{name: "InfiniBand, expression", linkType: 247, o: LiveOptions{Filter: "udp"}, wantErr: []string{`capture filter "udp"`, "INFINIBAND", "not implemented", "man pcap-filter"}},
		{name: "syntax error", linkType: 1, o: LiveOptions{Filter: "udp prot 4791"}, wantErr: []string{`capture filter "udp prot 4791" on test0`, "syntax error", "man pcap-filter"}},
		{name: "unknown name", linkType: 1, o: LiveOptions{Filter: "ether proto rocev3"}, wantErr: []string{`"ether proto rocev3"`, "rocev3", "man pcap-filter"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := lpOfflineLive(t, tt.linkType, tt.o)
			err := l.setFilter()
			if tt.wantErr != nil {
				if err == nil {
					t.Fatalf("no error; filter %q applied", l.Filter())
				}
				for _, w := range tt.wantErr {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q does not say %q", err, w)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if l.Filter() != tt.want {
				t.Errorf("filter %q, want %q", l.Filter(), tt.want)
			}
		})
	}
	if got := lpOfflineLive(t, 101, LiveOptions{}).linkType; got != layers.LinkTypeRaw {
		t.Errorf("raw IP: link type %d, want LINKTYPE_RAW %d (libpcap's DLT_RAW is 12)", got, layers.LinkTypeRaw)
	}
}

// TestLibpcapInterfaces: the loopback interface, described.
func TestLibpcapInterfaces(t *testing.T) {
	ifs, err := libpcapBackend{}.Interfaces()
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(ifs, func(i Interface) bool { return i.Name == "lo" })
	if i < 0 {
		t.Skipf("no lo among %v", ifs)
	}
	lo := ifs[i]
	if !lo.Up || lo.Backend != "libpcap" || !strings.Contains(lo.Description, "loopback") || !strings.Contains(lo.Description, "127.0.0.1/8") {
		t.Errorf("lo: %+v, want up, libpcap, loopback and 127.0.0.1/8", lo)
	}
	t.Logf("%d devices; lo: %q", len(ifs), lo.Description)
}

// TestLibpcapUnknownInterface: an unknown device names the known ones,
// whether chosen by name or because it is no network interface.
func TestLibpcapUnknownInterface(t *testing.T) {
	for _, backend := range []string{"libpcap", ""} {
		_, err := OpenLive(LiveOptions{Interface: "rocetap-nosuch0", Backend: backend})
		var ue *UnknownInterfaceError
		if !errors.As(err, &ue) {
			t.Fatalf("backend %q: %v (%T), want *UnknownInterfaceError", backend, err, err)
		}
		if !slices.ContainsFunc(ue.Available, func(i Interface) bool { return i.Name == "lo" }) || !strings.Contains(err.Error(), "lo") {
			t.Errorf("backend %q: %v: lo is not among the interfaces offered", backend, err)
		}
	}
}

// lpWithoutCaps runs f on a thread whose effective capabilities lack
// CAP_NET_RAW and CAP_NET_ADMIN (capabilities are per thread), then
// restores them.
func lpWithoutCaps(f func()) error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
		var caps, saved [2]unix.CapUserData
		if err := unix.Capget(&hdr, &caps[0]); err != nil {
			runtime.UnlockOSThread()
			errc <- err
			return
		}
		saved = caps
		caps[0].Effective &^= 1<<unix.CAP_NET_RAW | 1<<unix.CAP_NET_ADMIN
		if err := unix.Capset(&hdr, &caps[0]); err != nil {
			runtime.UnlockOSThread()
			errc <- err
			return
		}
		f()
		if err := unix.Capset(&hdr, &saved[0]); err != nil {
			errc <- err // the thread stays locked and ends with the goroutine
			return
		}
		runtime.UnlockOSThread()
		errc <- nil
	}()
	return <-errc
}

// TestLibpcapPermission: without CAP_NET_RAW, libpcap's refusal is a
// *PermissionError; an unknown device is still reported as unknown.
func TestLibpcapPermission(t *testing.T) {
	if os.Geteuid() != 0 {
		_, err := libpcapBackend{}.Open(LiveOptions{Interface: "lo"})
		var pe *PermissionError
		if !errors.As(err, &pe) {
			t.Fatalf("not root: %v (%T), want *PermissionError", err, err)
		}
		return
	}
	var errLo, errUnknown error
	if err := lpWithoutCaps(func() {
		_, errLo = libpcapBackend{}.Open(LiveOptions{Interface: "lo"})
		_, errUnknown = libpcapBackend{}.Open(LiveOptions{Interface: "rocetap-nosuch0"})
	}); err != nil {
		t.Skipf("cannot drop capabilities on a thread: %v", err)
	}
	var pe *PermissionError
	if !errors.As(errLo, &pe) || pe.Interface != "lo" || !strings.Contains(errLo.Error(), "CAP_NET_RAW") {
		t.Errorf("lo without CAP_NET_RAW: %v (%T), want *PermissionError", errLo, errLo)
	}
	var ue *UnknownInterfaceError
	if !errors.As(errUnknown, &ue) {
		t.Errorf("unknown device without CAP_NET_RAW: %v (%T), want *UnknownInterfaceError", errUnknown, errUnknown)
	}
	t.Logf("%v", errLo)
}

// lpVeth is a veth pair between two network namespaces made for a test:
// captures open on capIf in capNS, frames leave from sendIf in sendNS.
type lpVeth struct {
	capNS, sendNS string
	capIf, sendIf string
	capMAC        net.HardwareAddr
}

var lpNetnsSeq atomic.Int32

func lpIP(args ...string) error {
	out, err := exec.Command("ip", args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("ip %s: %v: %s", strings.Join(args, " "), err, bytes.TrimSpace(out))
	}
	return nil
}

// lpNewVeth makes the namespaces and the pair, removed when t ends; it
// skips t when it cannot (not root, no ip, no namespaces).
func lpNewVeth(t *testing.T) *lpVeth {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root: captures on a veth pair in network namespaces it creates (ip netns add)")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skip("needs iproute2's ip to create network namespaces")
	}
	n := lpNetnsSeq.Add(1)
	v := &lpVeth{
		capNS:  fmt.Sprintf("rocetap-lp%d-%d-cap", os.Getpid(), n),
		sendNS: fmt.Sprintf("rocetap-lp%d-%d-send", os.Getpid(), n),
		capIf:  "lpcap0",
		sendIf: "lpsend0",
	}
	for _, ns := range []string{v.capNS, v.sendNS} {
		if err := lpIP("netns", "add", ns); err != nil {
			t.Skipf("cannot create a network namespace: %v", err)
		}
		t.Cleanup(func() {
			if err := lpIP("netns", "del", ns); err != nil {
				t.Error(err)
			}
		})
		// No IPv6 link-local chatter (router and neighbor solicitations).
		_ = exec.Command("ip", "netns", "exec", ns, "sh", "-c", "echo 1 > /proc/sys/net/ipv6/conf/all/disable_ipv6; echo 1 > /proc/sys/net/ipv6/conf/default/disable_ipv6").Run()
	}
	for _, args := range [][]string{
		{"-n", v.capNS, "link", "add", v.capIf, "type", "veth", "peer", "name", v.sendIf, "netns", v.sendNS},
		{"-n", v.capNS, "link", "set", v.capIf, "up"},
		{"-n", v.sendNS, "link", "set", v.sendIf, "up"},
	} {
		if err := lpIP(args...); err != nil {
			t.Fatal(err)
		}
	}
	if err := lpInNetns(v.capNS, func() error {
		i, err := net.InterfaceByName(v.capIf)
		if err == nil {
			v.capMAC = i.HardwareAddr
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return v
}

// lpInNetns runs f on a thread in the network namespace ns. What f opens
// (sockets, capture handles) stays in ns; the thread returns to this
// process's namespace, or ends if it cannot.
func lpInNetns(ns string, f func() error) error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		orig, err := os.Open("/proc/thread-self/ns/net")
		if err != nil {
			runtime.UnlockOSThread()
			errc <- err
			return
		}
		defer orig.Close()
		target, err := os.Open(filepath.Join("/run/netns", ns))
		if err != nil {
			runtime.UnlockOSThread()
			errc <- err
			return
		}
		defer target.Close()
		if err := unix.Setns(int(target.Fd()), unix.CLONE_NEWNET); err != nil {
			runtime.UnlockOSThread()
			errc <- fmt.Errorf("entering network namespace %s: %w", ns, err)
			return
		}
		ferr := f()
		if err := unix.Setns(int(orig.Fd()), unix.CLONE_NEWNET); err != nil {
			errc <- fmt.Errorf("leaving network namespace %s: %w", ns, err) // the locked thread ends with the goroutine
			return
		}
		runtime.UnlockOSThread()
		errc <- ferr
	}()
	return <-errc
}

// open opens a libpcap capture on capIf.
func (v *lpVeth) open(t *testing.T, o LiveOptions) (*lpLive, error) {
	t.Helper()
	o.Interface = v.capIf
	var src LiveSource
	var err error
	if e := lpInNetns(v.capNS, func() error { src, err = (libpcapBackend{}).Open(o); return nil }); e != nil {
		t.Fatal(e)
	}
	if err != nil {
		return nil, err
	}
	l := src.(*lpLive)
	t.Cleanup(func() { l.Close() })
	return l, nil
}

// sender returns a function that sends a frame out of sendIf.
func (v *lpVeth) sender(t *testing.T) func(b []byte) error {
	t.Helper()
	var fd, ifindex int
	if err := lpInNetns(v.sendNS, func() error {
		i, err := net.InterfaceByName(v.sendIf)
		if err != nil {
			return err
		}
		ifindex = i.Index
		fd, err = unix.Socket(unix.AF_PACKET, unix.SOCK_RAW|unix.SOCK_CLOEXEC, 0)
		return err
	}); err != nil {
		t.Fatalf("opening an AF_PACKET socket on %s: %v", v.sendIf, err)
	}
	t.Cleanup(func() { unix.Close(fd) })
	return func(b []byte) error {
		sa := &unix.SockaddrLinklayer{Ifindex: ifindex, Halen: 6}
		copy(sa.Addr[:], b[:6])
		if err := unix.Sendto(fd, b, 0, sa); err != nil {
			return fmt.Errorf("sending a frame of %d bytes: %w", len(b), err)
		}
		return nil
	}
}

// lpRead reads n packets (copies), stopping the capture after a few
// seconds if they do not come.
func lpRead(t *testing.T, l *lpLive, n int) ([][]byte, []PacketInfo) {
	t.Helper()
	watchdog := time.AfterFunc(5*time.Second, l.Stop)
	defer watchdog.Stop()
	var got [][]byte
	var infos []PacketInfo
	for len(got) < n {
		data, info, err := l.Next()
		if err != nil {
			t.Fatalf("after %d of %d packets: %v", len(got), n, err)
		}
		got = append(got, slices.Clone(data))
		infos = append(infos, info)
	}
	return got, infos
}

// lpEnd stops the capture and checks that nothing more comes.
func lpEnd(t *testing.T, l *lpLive) {
	t.Helper()
	l.Stop()
	if data, _, err := l.Next(); !errors.Is(err, io.EOF) {
		t.Errorf("after Stop: %d bytes, %v; want io.EOF (the filter let a frame through?)", len(data), err)
	}
}

// TestLibpcapLive captures frames sent over a veth pair and checks what
// arrives, byte for byte, and the counters.
func TestLibpcapLive(t *testing.T) {
	v := lpNewVeth(t)
	sendFrame := v.sender(t)
	send := func(t *testing.T, b []byte) {
		t.Helper()
		if err := sendFrame(b); err != nil {
			t.Fatal(err)
		}
	}
	dst := v.capMAC
	bth := func(seed byte) []byte { return lpPayload(seed, 12+64+4) } // BTH, payload, ICRC
	pfcBody := []byte{0x01, 0x01, 0x00, 0x08, 0, 1, 0, 2, 0, 3, 0, 4, 0, 5, 0, 6, 0, 7, 0, 8}
	type fr struct {
		name           string
		b              []byte
		roce, pfc, alt bool // alt: RoCEv2 on UDP port 4792
	}
	frames := []fr{
		{name: "RoCEv2 IPv4", b: lpEth(dst, lpSrc, 0x0800, lpIPv4UDP(4791, 0, 5, bth(1))), roce: true},
		{name: "DNS", b: lpEth(dst, lpSrc, 0x0800, lpIPv4UDP(53, 0, 5, bth(2)))},
		{name: "RoCEv1", b: lpEth(dst, lpSrc, 0x8915, lpPayload(3, 40), bth(3)), roce: true},
		{name: "ARP", b: lpEth(dst, lpSrc, 0x0806, lpPayload(4, 28))},
		{name: "RoCEv2 IPv6", b: lpEth(dst, lpSrc, 0x86dd, lpIPv6UDP(17, 4791, bth(5))), roce: true},
		{name: "PFC", b: lpEth(lpPFCDst, lpSrc, 0x8808, pfcBody), pfc: true},
		{name: "802.1Q RoCEv2", b: lpEth(dst, lpSrc, 0x8100, lpTag(100, 0x0800), lpIPv4UDP(4791, 0, 5, bth(6))), roce: true},
		{name: "802.1Q DNS", b: lpEth(dst, lpSrc, 0x8100, lpTag(100, 0x0800), lpIPv4UDP(53, 0, 5, bth(7)))},
		{name: "RoCEv2 later fragment", b: lpEth(dst, lpSrc, 0x0800, lpIPv4UDP(4791, 0x0020, 5, bth(8)))},
		{name: "RoCEv2 on port 4792", b: lpEth(dst, lpSrc, 0x0800, lpIPv4UDP(4792, 0, 5, bth(10))), alt: true},
		{name: "RoCEv2 jumbo", b: lpEth(dst, lpSrc, 0x0800, lpIPv4UDP(4791, 0, 5, lpPayload(9, 1400))), roce: true},
	}
	check := func(t *testing.T, l *lpLive, keep func(fr) bool) {
		t.Helper()
		var want []fr
		for _, f := range frames {
			send(t, f.b)
			if keep(f) {
				want = append(want, f)
			}
		}
		got, infos := lpRead(t, l, len(want))
		for i, f := range want {
			if !bytes.Equal(got[i], f.b) {
				t.Errorf("packet %d (%s):\n got % x\nwant % x", i, f.name, got[i], f.b)
			}
			if in := infos[i]; in.CaptureLength != len(f.b) || in.Length != len(f.b) || in.LinkType != layers.LinkTypeEthernet || time.Since(in.Timestamp) > time.Minute {
				t.Errorf("packet %d (%s): info %+v, want %d bytes, Ethernet, a timestamp of now", i, f.name, in, len(f.b))
			}
		}
		lpEnd(t, l)
		st, err := l.Stats()
		if err != nil {
			t.Fatal(err)
		}
		var n int
		for _, f := range want {
			n += len(f.b)
		}
		// libpcap counts interface drops in promiscuous mode only.
		if st.Received != uint64(len(want)) || st.Bytes != uint64(n) || st.KernelDrops != 0 || st.IfDrops != 0 || st.HasIfDrops != l.opts.Promisc {
			t.Errorf("stats %+v, want %d packets, %d bytes, no drops, HasIfDrops %v", st, len(want), n, l.opts.Promisc)
		}
		t.Logf("%d of %d frames kept, byte for byte; stats %+v", len(want), len(frames), st)
	}

	t.Run("RoCE filter", func(t *testing.T) {
		l, err := v.open(t, LiveOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if l.LinkType() != layers.LinkTypeEthernet || l.Snaplen() != DefaultSnaplen || l.Interface() != v.capIf || l.Backend() != "libpcap" || l.Filter() != RoCEFilterExpr(false) {
			t.Errorf("link type %d, snaplen %d, interface %q, backend %q, filter %q", l.LinkType(), l.Snaplen(), l.Interface(), l.Backend(), l.Filter())
		}
		check(t, l, func(f fr) bool { return f.roce })
	})
	t.Run("RoCE filter with PFC, promiscuous", func(t *testing.T) {
		l, err := v.open(t, LiveOptions{PFC: true, Promisc: true, BufferMiB: 4})
		if err != nil {
			t.Fatal(err)
		}
		check(t, l, func(f fr) bool { return f.roce || f.pfc })
	})
	t.Run("RoCE filter, extra port", func(t *testing.T) {
		l, err := v.open(t, LiveOptions{Ports: []uint16{4792}})
		if err != nil {
			t.Fatal(err)
		}
		check(t, l, func(f fr) bool { return f.roce || f.alt })
	})
	t.Run("expression", func(t *testing.T) {
		l, err := v.open(t, LiveOptions{Filter: "arp or ether proto 0x8808"})
		if err != nil {
			t.Fatal(err)
		}
		check(t, l, func(f fr) bool { return f.name == "ARP" || f.pfc })
	})
	t.Run("bad expression", func(t *testing.T) {
		_, err := v.open(t, LiveOptions{Filter: "udp dst prot 4791"})
		// libpcap reads "prot" as a host name.
		if err == nil || !strings.Contains(err.Error(), `"udp dst prot 4791"`) || !strings.Contains(err.Error(), "unknown host 'prot'") || !strings.Contains(err.Error(), "man pcap-filter") {
			t.Errorf("error %v: want the expression, libpcap's message and man pcap-filter", err)
		}
	})
	t.Run("snaplen", func(t *testing.T) {
		l, err := v.open(t, LiveOptions{Snaplen: 64})
		if err != nil {
			t.Fatal(err)
		}
		if l.Snaplen() != 64 {
			t.Errorf("snaplen %d, want 64", l.Snaplen())
		}
		big := frames[len(frames)-1].b
		send(t, big)
		got, infos := lpRead(t, l, 1)
		if !bytes.Equal(got[0], big[:64]) || infos[0].CaptureLength != 64 || infos[0].Length != len(big) {
			t.Errorf("got %d bytes (info %+v), want the first 64 of %d", len(got[0]), infos[0], len(big))
		}
		lpEnd(t, l)
	})
	t.Run("burst", func(t *testing.T) {
		// 400 RoCE frames fit the ring even if the reader is slow (the
		// 400 others the kernel filters out): 512 slots with immediate
		// mode, 64 KiB each on veth.
		l, err := v.open(t, LiveOptions{})
		if err != nil {
			t.Fatal(err)
		}
		const n = 400
		roce, other := frames[0].b, frames[1].b
		for i := 0; i < n; i++ {
			send(t, roce)
			send(t, other)
		}
		lpRead(t, l, n)
		lpEnd(t, l)
		st, err := l.Stats()
		if err != nil {
			t.Fatal(err)
		}
		if st.Received != n || st.Bytes != uint64(n*len(roce)) || st.KernelDrops != 0 {
			t.Errorf("stats %+v after %d RoCE and %d other frames, want %d received, no drops", st, n, n, n)
		}
		t.Logf("sent %d frames, %d RoCE: stats %+v", 2*n, n, st)
	})
	t.Run("drops", func(t *testing.T) {
		// A 1 MiB buffer that is not read overflows: what Next returns
		// and what the kernel dropped add up to what was sent.
		l, err := v.open(t, LiveOptions{BufferMiB: 1})
		if err != nil {
			t.Fatal(err)
		}
		// 3000 frames of 1.4 KB (a RoCE frame with trailing bytes the
		// filter does not look at): 4 MB, four times the buffer.
		big := append(bytes.Clone(frames[0].b), make([]byte, 1300)...)
		const n = 3000
		for i := 0; i < n; i++ {
			send(t, big)
		}
		time.Sleep(50 * time.Millisecond)
		l.Stop()
		var got uint64
		for {
			_, _, err := l.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			got++
		}
		st, err := l.Stats()
		if err != nil {
			t.Fatal(err)
		}
		if st.Received != got || st.KernelDrops == 0 || st.Received+st.KernelDrops != n {
			t.Errorf("stats %+v after %d RoCE frames into a 1 MiB buffer, %d read after Stop: want received + kernel drops = %d, some drops", st, n, got, n)
		}
		t.Logf("sent %d RoCE frames into 1 MiB: read %d after Stop; stats %+v", n, got, st)
	})
	t.Run("Stats beside Next and Close", func(t *testing.T) {
		// Stats may be called from any goroutine: here while another
		// reads, stops and closes (the race detector watches).
		l, err := v.open(t, LiveOptions{})
		if err != nil {
			t.Fatal(err)
		}
		statsDone := make(chan int)
		go func() {
			calls := 0
			for {
				calls++
				if _, err := l.Stats(); err != nil {
					statsDone <- calls
					return
				}
			}
		}()
		readDone := make(chan error)
		go func() {
			for {
				if _, _, err := l.Next(); err != nil {
					l.Close()
					readDone <- err
					return
				}
			}
		}()
		for i := 0; i < 50; i++ {
			send(t, frames[0].b)
		}
		time.Sleep(50 * time.Millisecond)
		l.Stop()
		if err := <-readDone; !errors.Is(err, io.EOF) {
			t.Errorf("Next: %v, want io.EOF", err)
		}
		calls := <-statsDone
		st, err := l.Stats()
		if !errors.Is(err, errClosed) || st.Received != 50 {
			t.Errorf("Stats after Close: %+v, %v; want 50 received and errClosed", st, err)
		}
		t.Logf("%d Stats calls beside Next, Stop and Close", calls)
	})
	t.Run("stop unblocks Next", func(t *testing.T) {
		l, err := v.open(t, LiveOptions{})
		if err != nil {
			t.Fatal(err)
		}
		errc := make(chan error, 1)
		start := time.Now()
		go func() {
			_, _, err := l.Next()
			errc <- err
		}()
		time.Sleep(100 * time.Millisecond)
		l.Stop()
		l.Stop()
		select {
		case err := <-errc:
			if !errors.Is(err, io.EOF) {
				t.Errorf("Next after Stop: %v, want io.EOF", err)
			}
			t.Logf("Next returned %v after %v (Stop at 100ms)", err, time.Since(start).Round(time.Millisecond))
		case <-time.After(2 * time.Second):
			t.Fatal("Next still blocked 2s after Stop")
		}
		if _, _, err := l.Next(); !errors.Is(err, io.EOF) {
			t.Errorf("Next again: %v, want io.EOF", err)
		}
		l.Close()
		if _, _, err := l.Next(); err == nil {
			t.Error("Next after Close: no error")
		}
		if _, err := l.Stats(); err == nil {
			t.Error("Stats after Close: no error")
		}
	})
}
