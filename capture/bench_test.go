package capture

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/iotest"
	"time"

	"github.com/gopacket/gopacket/layers"
)

var (
	benchDir  string
	benchOnce sync.Once
	benchMu   sync.Mutex
	benchGen  = map[string]string{}
)

func TestMain(m *testing.M) {
	code := m.Run()
	if benchDir != "" {
		os.RemoveAll(benchDir)
	}
	os.Exit(code)
}

// genFile writes (once per process) a capture of about size bytes in a
// temporary directory and returns its path and packet count. Frames
// alternate between RoCE ACK-sized (66 bytes) and MTU-sized (1082 bytes)
// unless small is set (all 64 bytes: the worst case per byte).
func genFile(tb testing.TB, format string, size int64, small bool) (string, int) {
	tb.Helper()
	key := fmt.Sprintf("%s-%d-%v", format, size, small)
	benchMu.Lock()
	defer benchMu.Unlock()
	benchOnce.Do(func() {
		d, err := os.MkdirTemp("", "rocetap-capture-bench")
		if err != nil {
			tb.Fatal(err)
		}
		benchDir = d
	})
	path := filepath.Join(benchDir, key)
	if n, ok := benchGen[key]; ok {
		c, _ := strconv.Atoi(n)
		return path, c
	}
	f, err := os.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	bw := bufio.NewWriterSize(f, 1<<20)
	var write func(PacketInfo, []byte) error
	switch format {
	case "pcap":
		w, err := NewPcapWriter(bw, layers.LinkTypeEthernet, 0, false)
		if err != nil {
			tb.Fatal(err)
		}
		write = w.WritePacket
	case "pcapng":
		w, err := NewPcapngWriter(bw)
		if err != nil {
			tb.Fatal(err)
		}
		w.AddInterface(layers.LinkTypeEthernet, 0, "eth0", true)
		write = w.WritePacket
	case "erf":
		w := NewERFWriter(bw)
		write = func(info PacketInfo, data []byte) error {
			return w.WriteRecord(erfRecord(info.Timestamp, data, 0, erfTypeETH))
		}
	}
	frame := make([]byte, 1082)
	for i := range frame {
		frame[i] = byte(i)
	}
	var written int64
	n := 0
	for written < size {
		l := 66
		if small {
			l = 64
		} else if n%2 == 1 {
			l = 1082
		}
		if err := write(PacketInfo{Timestamp: t0.Add(time.Duration(n) * time.Microsecond)}, frame[:l]); err != nil {
			tb.Fatal(err)
		}
		written += int64(l) + 16
		n++
	}
	if err := bw.Flush(); err != nil {
		tb.Fatal(err)
	}
	f.Close()
	benchGen[key] = strconv.Itoa(n)
	return path, n
}

// openMode opens path with Open, or as a non-seekable stream.
func openMode(tb testing.TB, path string, stream bool) (*Reader, func()) {
	tb.Helper()
	if !stream {
		r, err := Open(path)
		if err != nil {
			tb.Fatal(err)
		}
		return r, func() { r.Close() }
	}
	f, err := os.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	r, err := NewReader(noSeek{iotestHalf(f)})
	if err != nil {
		tb.Fatal(err)
	}
	return r, func() { r.Close(); f.Close() }
}

// TestNextDoesNotAllocate proves Next allocates nothing per packet in steady
// state, across buffer refills, in every format and both read paths.
// iotestHalf makes a stream return short reads, as pipes do.
func iotestHalf(r io.Reader) io.Reader { return iotest.HalfReader(r) }

func TestNextDoesNotAllocate(t *testing.T) {
	for _, format := range []string{"pcap", "pcapng", "erf"} {
		for _, stream := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/stream=%v", format, stream), func(t *testing.T) {
				path, n := genFile(t, format, 8<<20, false) // 8 MiB: many refills of the 256 KiB buffer
				r, done := openMode(t, path, stream)
				defer done()
				runs := min(n-10, 10000)
				var sink int
				allocs := testing.AllocsPerRun(runs, func() {
					data, info, err := r.Next()
					if err != nil {
						t.Fatal(err)
					}
					sink += len(data) + info.Length
				})
				if allocs != 0 {
					t.Fatalf("Next allocates %.2f times per packet", allocs)
				}
				_ = sink
			})
		}
	}
}

// BenchmarkReaderNext measures Next per packet (SetBytes is the average
// record size, so MB/s is file bytes per second).
func BenchmarkReaderNext(b *testing.B) {
	for _, format := range []string{"pcap", "pcap-64B", "pcapng", "erf"} {
		for _, stream := range []bool{true, false} {
			b.Run(fmt.Sprintf("%s/stream=%v", format, stream), func(b *testing.B) {
				path, n := genFile(b, strings.TrimSuffix(format, "-64B"), 64<<20, strings.HasSuffix(format, "-64B"))
				st, _ := os.Stat(path)
				b.SetBytes(st.Size() / int64(n))
				b.ReportAllocs()
				r, done := openMode(b, path, stream)
				var sink int
				b.ResetTimer()
				for range b.N {
					data, _, err := r.Next()
					if err == io.EOF {
						done()
						r, done = openMode(b, path, stream)
						data, _, err = r.Next()
					}
					if err != nil {
						b.Fatal(err)
					}
					sink += len(data)
				}
				b.StopTimer()
				done()
				_ = sink
			})
		}
	}
}

// TestThroughputVsCat reads a 1 GiB pcap from the page cache and compares
// with cat FILE > /dev/null. It is slow, so it runs only with
// ROCETAP_THROUGHPUT=1 (set ROCETAP_THROUGHPUT_MB to change the size).
func TestThroughputVsCat(t *testing.T) {
	if os.Getenv("ROCETAP_THROUGHPUT") == "" {
		t.Skip("set ROCETAP_THROUGHPUT=1 to compare with cat on a 1 GiB file")
	}
	mb := int64(1024)
	if s := os.Getenv("ROCETAP_THROUGHPUT_MB"); s != "" {
		mb, _ = strconv.ParseInt(s, 10, 64)
	}
	for _, small := range []bool{false, true} {
		path, n := genFile(t, "pcap", mb<<20, small)
		st, _ := os.Stat(path)
		best := func(f func()) time.Duration {
			d := time.Duration(1 << 62)
			for range 5 {
				start := time.Now()
				f()
				d = min(d, time.Since(start))
			}
			return d
		}
		cat := best(func() {
			if err := exec.Command("sh", "-c", "cat \"$0\" > /dev/null", path).Run(); err != nil {
				t.Fatal(err)
			}
		})
		read := best(func() {
			r, done := openMode(t, path, false)
			defer done()
			c := 0
			for {
				_, _, err := r.Next()
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				c++
			}
			if c != n {
				t.Fatalf("read %d of %d packets", c, n)
			}
		})
		mbps := func(d time.Duration) float64 { return float64(st.Size()) / d.Seconds() / 1e6 }
		t.Logf("%d MB, %d packets (avg %d B): cat %v (%.0f MB/s); Open+Next %v (%.0f MB/s, %.2fx cat, %.1f ns/pkt)",
			st.Size()/1e6, n, st.Size()/int64(n), cat, mbps(cat),
			read, mbps(read), read.Seconds()/cat.Seconds(), float64(read.Nanoseconds())/float64(n))
		if !small && read > cat*3/2 {
			t.Errorf("reading takes more than 1.5x cat")
		}
	}
}

// TestWritersDoNotAllocate: writing a packet allocates nothing.
func TestWritersDoNotAllocate(t *testing.T) {
	data := make([]byte, 1082)
	info := PacketInfo{Timestamp: t0, Length: 2000}
	pw, err := NewPcapWriter(io.Discard, layers.LinkTypeEthernet, 0, true)
	if err != nil {
		t.Fatal(err)
	}
	nw, err := NewPcapngWriter(io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	nw.AddInterface(layers.LinkType(247), 0, "ib0", true)
	ew := NewERFWriter(io.Discard)
	rec := erfRecord(t0, data, 1, erfTypeETH)
	for name, f := range map[string]func() error{
		"pcap":   func() error { return pw.WritePacket(info, data) },
		"pcapng": func() error { return nw.WritePacket(info, data) },
		"erf":    func() error { return ew.WriteRecord(rec) },
	} {
		if a := testing.AllocsPerRun(1000, func() {
			if err := f(); err != nil {
				t.Fatal(err)
			}
		}); a != 0 {
			t.Errorf("%s writer: %.1f allocations per packet", name, a)
		}
	}
}
