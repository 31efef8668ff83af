//go:build linux

package capture_test

import (
	"bytes"
	"errors"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rocetap/rocetap/capture"
	"github.com/rocetap/rocetap/decode"
	"github.com/rocetap/rocetap/internal/netnstest"
	"github.com/rocetap/rocetap/internal/testcap"
)

func roceFrames(t *testing.T, n int, psn0 uint32) [][]byte {
	t.Helper()
	return netnstest.RoCEFrames(t, n, psn0)
}

// noise is what the filter must leave out: ARP and a UDP datagram to
// port 53.
func noise(t *testing.T) [][]byte {
	arp := frame(0x0806, make([]byte, 28))
	dns := frame(0x0800, ipv4(17, 0, 5), udp(53))
	return [][]byte{arp, dns}
}

type captured struct {
	data []byte
	info capture.PacketInfo
}

// captureWhile captures on the pair's B end while send runs in A, then
// stops the capture and returns what it got and its final statistics.
func captureWhile(t *testing.T, v *netnstest.Pair, opts capture.LiveOptions, send func(s *senderT)) ([]captured, capture.LiveStats) {
	t.Helper()
	opts.Interface = v.IfB
	var live capture.LiveSource
	var err error
	netnstest.In(t, v.NsB, func() { live, err = capture.OpenLive(opts) })
	if err != nil {
		t.Fatal(err)
	}
	defer live.Close()
	var got []captured
	done := make(chan error, 1)
	go func() {
		for {
			data, info, err := live.Next()
			if errors.Is(err, io.EOF) {
				done <- nil
				return
			}
			if err != nil {
				done <- err
				return
			}
			got = append(got, captured{bytes.Clone(data), info})
		}
	}()
	// The socket opened in A stays there: it sends from any thread.
	var snd *netnstest.Sender
	netnstest.In(t, v.NsA, func() { snd = netnstest.NewSender(t, v.IfA) })
	send(&senderT{Sender: snd, t: t})
	time.Sleep(100 * time.Millisecond) // the ring's block timeout is 10 ms
	live.Stop()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	st, err := live.Stats()
	if err != nil {
		t.Fatal(err)
	}
	return got, st
}

type senderT struct {
	*netnstest.Sender
	t *testing.T
}

// sendAt sends frames at about rate frames per second.
func (s *senderT) sendAt(frames [][]byte, rate int) {
	if err := s.SendAt(frames, rate); err != nil {
		s.t.Errorf("send: %v", err)
	}
}

// TestLiveAFPacketVeth: every RoCE frame sent on a veth pair is captured
// byte for byte and in order, the filter leaves the rest out, the kernel
// reports no drop, and the file written from the capture reads back in
// rocetap and tshark.
func TestLiveAFPacketVeth(t *testing.T) {
	v := netnstest.New(t)
	const n = 4000
	frames := roceFrames(t, n, 0xFFFF00) // the PSNs wrap
	junk := noise(t)
	t0 := time.Now()
	got, st := captureWhile(t, v, capture.LiveOptions{Backend: "afpacket"}, func(s *senderT) {
		for i := 0; i < len(frames); i += 100 {
			s.sendAt(junk, 0)
			s.sendAt(frames[i:min(i+100, len(frames))], 40000)
		}
	})
	if len(got) != n {
		t.Fatalf("captured %d frames, sent %d RoCE frames (and %d others); stats %+v", len(got), n, 2*n/100, st)
	}
	for i := range got {
		if !bytes.Equal(got[i].data, frames[i]) {
			t.Fatalf("frame %d differs: captured %d bytes, sent %d", i+1, len(got[i].data), len(frames[i]))
		}
		if got[i].info.Length != len(frames[i]) || got[i].info.LinkType != decode.LinkTypeEthernet || got[i].info.Timestamp.Before(t0) {
			t.Fatalf("frame %d: info %+v", i+1, got[i].info)
		}
	}
	if st.Received != n || st.KernelDrops != 0 {
		t.Errorf("stats %+v: want %d received, 0 dropped by the kernel", st, n)
	}
	if !st.HasIfDrops {
		t.Errorf("stats %+v: no interface drop count", st)
	}
	t.Logf("%d frames captured byte for byte; stats %+v", len(got), st)

	// The file: pcapng, read back by rocetap's reader and decoder and by
	// tshark.
	path := filepath.Join(t.TempDir(), "veth.pcapng")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w, err := capture.NewPcapngWriter(f)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.AddInterface(decode.LinkTypeEthernet, capture.DefaultSnaplen, v.IfB, true); err != nil {
		t.Fatal(err)
	}
	for _, c := range got {
		if err := w.WritePacket(c.info, c.data); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	r, err := capture.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var p decode.Packet
	var psns []string
	for i := 0; ; i++ {
		data, info, err := r.Next()
		if errors.Is(err, io.EOF) {
			if i != n {
				t.Fatalf("the file holds %d frames, want %d", i, n)
			}
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		p.Frame = decode.Frame{Number: i + 1, Len: info.Length}
		decode.Decode(&p, data, info.LinkType)
		if p.Encap != decode.EncapRoCEv2 || p.ICRCStatus != decode.CRCGood {
			t.Fatalf("frame %d: %s, ICRC %s", i+1, p.Encap, p.ICRCStatus)
		}
		psns = append(psns, strconv.Itoa(int(p.BTH.PSN)))
	}
	tshark := testcap.Tshark(t)
	out, err := exec.Command(tshark, "-r", path, "-T", "fields", "-e", "infiniband.bth.psn").Output()
	if err != nil {
		t.Fatalf("tshark -r %s: %v", path, err)
	}
	if want := strings.Join(psns, "\n") + "\n"; string(out) != want {
		t.Errorf("tshark reads other PSNs than rocetap (%d lines vs %d)", strings.Count(string(out), "\n"), len(psns))
	}
}

// TestLiveAFPacketSnaplenPFCFilter: the snapshot length cuts frames (the
// wire length stays), PFC frames pass only when asked for, and a compiled
// filter replaces the built-in one.
func TestLiveAFPacketSnaplenPFCFilter(t *testing.T) {
	v := netnstest.New(t)
	frames := roceFrames(t, 10, 100)
	pfc := frame(0x8808, []byte{0x01, 0x01, 0x00, 0x08})
	t.Run("snaplen and pfc", func(t *testing.T) {
		got, _ := captureWhile(t, v, capture.LiveOptions{Backend: "afpacket", Snaplen: 96, PFC: true}, func(s *senderT) {
			s.sendAt(append([][]byte{pfc}, frames...), 0)
		})
		if len(got) != 11 {
			t.Fatalf("captured %d frames, want 11", len(got))
		}
		if !bytes.Equal(got[0].data, pfc[:min(96, len(pfc))]) {
			t.Errorf("PFC frame: %x", got[0].data)
		}
		for i, c := range got[1:] {
			want := frames[i][:min(96, len(frames[i]))]
			if !bytes.Equal(c.data, want) || c.info.Length != len(frames[i]) {
				t.Errorf("frame %d: %d bytes captured of %d on the wire, want %d of %d", i+2, len(c.data), c.info.Length, len(want), len(frames[i]))
			}
		}
	})
	t.Run("compiled filter", func(t *testing.T) {
		// tcpdump -ddd 'ether proto 0x0806' (ARP only).
		arpOnly := "4,40 0 0 12,21 0 1 2054,6 0 0 262144,6 0 0 0"
		got, _ := captureWhile(t, v, capture.LiveOptions{Backend: "afpacket", Filter: arpOnly}, func(s *senderT) {
			s.sendAt(append(noise(t), frames...), 0)
		})
		if len(got) != 1 || binaryEtherType(got[0].data) != 0x0806 {
			t.Fatalf("captured %d frames, want the 1 ARP frame", len(got))
		}
	})
}

func binaryEtherType(b []byte) uint16 { return uint16(b[12])<<8 | uint16(b[13]) }

// TestLiveErrors: errors say what was wrong and what to do.
func TestLiveErrors(t *testing.T) {
	cases := []struct {
		opts capture.LiveOptions
		want []string
	}{
		{capture.LiveOptions{}, []string{"no interface given", "-D"}},
		{capture.LiveOptions{Interface: "lo", Snaplen: 10}, []string{"snapshot length 10"}},
		{capture.LiveOptions{Interface: "lo", BufferMiB: -1}, []string{"ring buffer of -1 MiB"}},
		{capture.LiveOptions{Interface: "lo", Backend: "nosuch"}, []string{`backend "nosuch" is not built in`, "afpacket"}},
		{capture.LiveOptions{Interface: "rtap-no-such-if0", Backend: "afpacket"}, []string{`no interface "rtap-no-such-if0"`, "lo"}},
	}
	if os.Geteuid() == 0 {
		cases = append(cases, struct {
			opts capture.LiveOptions
			want []string
		}{capture.LiveOptions{Interface: "lo", Backend: "afpacket", Filter: "udp port 4791"}, []string{`capture filter "udp port 4791"`, "tcpdump -ddd", "make build-libpcap"}})
	}
	for _, c := range cases {
		l, err := capture.OpenLive(c.opts)
		if err == nil {
			l.Close()
			t.Errorf("OpenLive(%+v) succeeded", c.opts)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("OpenLive(%+v): %q lacks %q", c.opts, err, w)
			}
		}
	}
}

// TestLivePermission: without CAP_NET_RAW the error names it and says how
// to grant it. As root, the test drops the capability in a child process.
func TestLivePermission(t *testing.T) {
	if os.Geteuid() == 0 {
		if os.Getenv("ROCETAP_TEST_NO_CAP") == "" {
			// As root, the test drops CAP_NET_RAW with capsh.
			capsh := testcap.Tool(t, "capsh", "install it with `apt-get install -y libcap2-bin` (.ci/run does)")
			exe, _ := os.Executable()
			cmd := exec.Command(capsh, "--drop=cap_net_raw", "--", "-c", exe+" -test.run=^TestLivePermission$ -test.v")
			cmd.Env = append(os.Environ(), "ROCETAP_TEST_NO_CAP=1")
			out, err := cmd.CombinedOutput()
			if err != nil || !strings.Contains(string(out), "--- PASS: TestLivePermission") {
				t.Fatalf("without CAP_NET_RAW: %v\n%s", err, out)
			}
			return
		}
	}
	_, err := capture.OpenLive(capture.LiveOptions{Interface: "lo", Backend: "afpacket"})
	var pe *capture.PermissionError
	if !errors.As(err, &pe) || !strings.Contains(err.Error(), "CAP_NET_RAW") || !strings.Contains(err.Error(), "setcap cap_net_raw,cap_net_admin+eip") {
		t.Fatalf("OpenLive without CAP_NET_RAW: %v", err)
	}
}

// TestLiveLoopbackOnce: on lo the kernel gives a packet socket each
// packet twice (outgoing, then incoming); the capture records it once, as
// dumpcap does. Eight UDP datagrams to port 4791 inside a namespace's lo
// are eight packets.
func TestLiveLoopbackOnce(t *testing.T) {
	v := netnstest.New(t)
	for _, o := range []capture.LiveOptions{{Backend: "afpacket"}, {Backend: "afpacket", Filter: "1,6 0 0 262144"}} {
		var live capture.LiveSource
		var err error
		netnstest.In(t, v.NsA, func() {
			live, err = capture.OpenLive(capture.LiveOptions{Interface: "lo", Backend: o.Backend, Filter: o.Filter})
		})
		if err != nil {
			t.Fatal(err)
		}
		netnstest.In(t, v.NsA, func() {
			srv, err := net.ListenPacket("udp4", "127.0.0.1:4791") // no ICMP port unreachable
			if err != nil {
				t.Fatal(err)
			}
			defer srv.Close()
			c, err := net.Dial("udp4", "127.0.0.1:4791")
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			for i := 0; i < 8; i++ {
				if _, err := c.Write(make([]byte, 40)); err != nil {
					t.Fatal(err)
				}
			}
		})
		time.Sleep(100 * time.Millisecond) // the ring's block timeout is 10 ms
		live.Stop()
		n := 0
		for {
			data, _, err := live.Next()
			if err != nil {
				break
			}
			if len(data) >= 38 && binaryEtherType(data) == 0x0800 && data[23] == 17 && data[36] == 0x12 && data[37] == 0xb7 {
				n++ // UDP to port 4791
			}
		}
		live.Close()
		if n != 8 {
			t.Errorf("filter %q: captured %d datagrams to port 4791 on lo, want 8", o.Filter, n)
		}
	}
}

// TestLiveInterfaceDeleted (issue 18.7): deleting the interface under a
// capture ends it with an error that says so, not a bare "packet poll
// failed".
func TestLiveInterfaceDeleted(t *testing.T) {
	v := netnstest.New(t)
	var live capture.LiveSource
	var err error
	netnstest.In(t, v.NsB, func() { live, err = capture.OpenLive(capture.LiveOptions{Interface: v.IfB, Backend: "afpacket"}) })
	if err != nil {
		t.Fatal(err)
	}
	defer live.Close()
	done := make(chan error, 1)
	go func() {
		for {
			if _, _, err := live.Next(); err != nil {
				done <- err
				return
			}
		}
	}()
	time.Sleep(50 * time.Millisecond)
	if out, err := exec.Command("ip", "-n", v.NsB, "link", "del", v.IfB).CombinedOutput(); err != nil {
		t.Fatalf("ip link del: %v: %s", err, out)
	}
	select {
	case err := <-done:
		if err == io.EOF || !strings.Contains(err.Error(), "the interface went away") || !strings.Contains(err.Error(), v.IfB) {
			t.Errorf("error %v: want one saying %s went away", err, v.IfB)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the capture goes on 5 s after its interface was deleted")
	}
}
