package cli

import (
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/rocetap/rocetap/capture"
	"github.com/rocetap/rocetap/decode"
	"github.com/rocetap/rocetap/decode/filter"
	"github.com/rocetap/rocetap/flow"
	"github.com/rocetap/rocetap/internal/printer"
	"github.com/rocetap/rocetap/stream"
	"github.com/spf13/cobra"
)

// CaptureOptions are the flags of `rocetap capture`.
type CaptureOptions struct {
	Interface  string   // -i
	Write      string   // -w
	Force      bool     // --force: -w may replace an existing file
	Count      int      // -c
	Autostop   []string // -a duration:S
	Ring       []string // -b filesize:KB, duration:S, files:N
	List       bool     // -D
	Filter     string   // -f
	PFC        bool     // --pfc
	Snaplen    int      // -s
	NoPromisc  bool     // -p
	BufferMiB  int      // -B
	Display    string   // -Y
	Quiet      bool     // -q
	StatsEvery float64  // --stats-every
	Backend    string   // --backend
	Decode     []string // -d

	// Set by validate from Autostop and Ring.
	duration time.Duration
	sink     capture.SinkOptions
	// signals, when set, replaces SIGINT/SIGTERM (tests).
	signals <-chan os.Signal
	// exit, when set, replaces os.Exit for a capture abandoned because its
	// output stalled (tests).
	exit func(int)
	// open, when set, replaces capture.OpenLive (tests: it opens on a
	// thread in a network namespace).
	open func(capture.LiveOptions) (capture.LiveSource, error)
}

// NewCmdCapture builds `rocetap capture`.
func NewCmdCapture(ios IO) *cobra.Command { return newCmdCapture(ios, nil) }

func newCmdCapture(ios IO, runF func(*CaptureOptions) error) *cobra.Command {
	opts := &CaptureOptions{}
	cmd := &cobra.Command{
		Use:   "capture -i IFACE [-w FILE]",
		Short: "Capture RoCE traffic live, like dumpcap and tshark -i",
		Long: `Capture RoCE traffic on a network interface: RoCEv2 (UDP port 4791, and the
-d ports), RoCEv1 (EtherType 0x8915), with --pfc also PFC and PAUSE frames.
The kernel filters the packets (AF_PACKET with a TPACKET_V3 ring; build
with -tags libpcap, make build-libpcap, for pcap filter expressions and
RDMA sniffer devices such as mlx5_0).

With -w FILE the packets go to a pcapng file (its interface description
holds the link type and snapshot length; capture statistics close it); -w -
streams classic pcap to stdout for a pipe: rocetap capture -i eth0 -w - |
rocetap decode -r -. -b rotates files as dumpcap does. Without -q, a
summary line per packet (only those matching -Y), or with --stats-every a
status line, shows what is captured. Ctrl-C (SIGINT) or SIGTERM stops the
capture: everything captured is written, the file is complete, and the
final statistics are printed.`,
		Example: `  rocetap capture -D
  rocetap capture -i eth0
  rocetap capture -i eth0 -w roce.pcapng -q --stats-every 1
  rocetap capture -i eth0 -w ring.pcapng -b filesize:102400 -b files:10
  rocetap capture -i eth0 -w - | rocetap stats -r -
  rocetap capture -i eth0 -Y 'infiniband.aeth.syndrome & 0x60 == 0x60'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := opts.validate(); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			return captureRun(opts, ios)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&opts.Interface, "interface", "i", "", "interface to capture on (-D lists them)")
	f.StringVarP(&opts.Write, "write", "w", "", "write the packets to this pcapng file (- streams pcap to stdout)")
	f.IntVarP(&opts.Count, "count", "c", 0, "stop after this many packets")
	f.StringArrayVarP(&opts.Autostop, "autostop", "a", nil, "stop condition, as dumpcap: duration:SECONDS, packets:N, filesize:KB (the file stays within KB kB of 1000 bytes; with -b it rotates as -b filesize), files:N (stop before file N+1; needs -b)")
	f.StringArrayVarP(&opts.Ring, "ring-buffer", "b", nil, "rotate files: filesize:KB, duration:SECONDS, files:N (keep the last N)")
	f.BoolVarP(&opts.List, "list-interfaces", "D", false, "list the interfaces to capture on and exit")
	f.StringVarP(&opts.Filter, "capture-filter", "f", "", "capture filter instead of the built-in RoCE filter (afpacket: compiled BPF, tcpdump -ddd output; libpcap: a pcap filter expression)")
	f.BoolVar(&opts.PFC, "pfc", false, "also capture PFC and PAUSE frames (EtherType 0x8808)")
	f.IntVarP(&opts.Snaplen, "snapshot-length", "s", capture.DefaultSnaplen, "keep at most this many bytes of each packet")
	f.BoolVarP(&opts.NoPromisc, "no-promiscuous-mode", "p", false, "do not put the interface in promiscuous mode")
	f.IntVarP(&opts.BufferMiB, "buffer-size", "B", capture.DefaultBufferMiB, "kernel ring size in MiB")
	f.StringVarP(&opts.Display, "display-filter", "Y", "", "show only packets matching this display filter in the live summary (all are written)")
	f.BoolVarP(&opts.Quiet, "quiet", "q", false, "no summary lines")
	f.BoolVar(&opts.Force, "force", false, "let -w replace an existing file")
	f.Float64Var(&opts.StatsEvery, "stats-every", 0, "print a status line (packets, bytes, packets/s, drops) every this many seconds instead of summary lines")
	f.StringVar(&opts.Backend, "backend", "", "capture backend: "+strings.Join(capture.Backends(), ", ")+" (default: the first)")
	f.StringArrayVarP(&opts.Decode, "decode-as", "d", nil, "also capture and decode a UDP port as RoCEv2 (udp.port==PORT,infiniband), or show a QP's SENDs as an upper-layer protocol (infiniband.bth.destqp==QP,PROTO)")
	return cmd
}

// parseKV parses "key:value" of -a and -b.
func parseKV(flag, s string) (key string, val int64, err error) {
	k, v, ok := strings.Cut(s, ":")
	n, perr := strconv.ParseInt(v, 10, 64)
	if !ok || perr != nil || n <= 0 {
		return "", 0, fmt.Errorf("%s %q: want KEY:NUMBER with a positive number, e.g. %s", flag, s, map[string]string{"-a": "-a duration:60", "-b": "-b filesize:102400"}[flag])
	}
	return k, n, nil
}

func (o *CaptureOptions) validate() error {
	if o.List {
		return nil
	}
	if o.Interface == "" {
		return errors.New("no interface given: name one with -i (rocetap capture -D lists them)")
	}
	if o.Count < 0 {
		return fmt.Errorf("-c %d: want a positive packet count", o.Count)
	}
	if o.StatsEvery < 0 {
		return fmt.Errorf("--stats-every %g: want a positive number of seconds", o.StatsEvery)
	}
	o.sink = capture.SinkOptions{Path: o.Write, Overwrite: o.Force}
	for _, a := range o.Autostop {
		k, n, err := parseKV("-a", a)
		if err != nil {
			return err
		}
		switch k {
		case "duration":
			o.duration = time.Duration(n) * time.Second
		case "packets":
			if o.Count == 0 || int(n) < o.Count {
				o.Count = int(n) // with -c too, the smaller
			}
		case "filesize":
			o.sink.StopFileSizeKB = n
		case "files":
			o.sink.StopFiles = int(n)
		default:
			return fmt.Errorf("-a %q: want duration:SECONDS, packets:N, filesize:KB or files:N", a)
		}
	}
	if (o.sink.StopFileSizeKB != 0 || o.sink.StopFiles != 0) && (o.Write == "" || o.Write == "-") {
		return errors.New("-a filesize and -a files stop writing a file: give -w FILE")
	}
	for _, b := range o.Ring {
		k, n, err := parseKV("-b", b)
		if err != nil {
			return err
		}
		switch k {
		case "filesize":
			o.sink.FileSizeKB = n
		case "duration":
			o.sink.Duration = time.Duration(n) * time.Second
		case "files":
			o.sink.Files = int(n)
		default:
			return fmt.Errorf("-b %q: want filesize:KB, duration:SECONDS or files:N", b)
		}
	}
	if o.sink.StopFileSizeKB != 0 && o.sink.FileSizeKB == 0 && len(o.Ring) > 0 {
		// With -b, dumpcap's -a filesize switches to the next file.
		o.sink.FileSizeKB, o.sink.StopFileSizeKB = o.sink.StopFileSizeKB, 0
	}
	if len(o.Ring) > 0 && (o.Write == "" || o.Write == "-") {
		return errors.New("-b needs a file to rotate: give -w FILE")
	}
	return nil
}

func captureRun(o *CaptureOptions, ios IO) error {
	if o.List {
		ifs, err := capture.ListInterfaces()
		if err != nil {
			return err
		}
		for i, f := range ifs {
			state := ""
			if !f.Up {
				state = " [down]"
			}
			desc := ""
			if f.Description != "" {
				desc = " (" + f.Description + ")"
			}
			fmt.Fprintf(ios.Out, "%d. %s%s%s\n", i+1, f.Name, desc, state)
		}
		return nil
	}
	ports, err := decodeAsPorts(o.Decode)
	if err != nil {
		return err
	}
	decodeAs, err := ulpDecodeAs(o.Decode)
	if err != nil {
		return err
	}
	var disp *filter.Filter
	if o.Display != "" {
		if disp, err = filter.Compile(o.Display); err != nil {
			return err
		}
	}
	open := capture.OpenLive
	if o.open != nil {
		open = o.open
	}
	live, err := open(capture.LiveOptions{Interface: o.Interface, Snaplen: o.Snaplen, Promisc: !o.NoPromisc,
		BufferMiB: o.BufferMiB, Filter: o.Filter, PFC: o.PFC, Ports: ports, Backend: o.Backend})
	if err != nil {
		return err
	}
	defer live.Close()
	fmt.Fprintf(ios.ErrOut, "Capturing on %s (%s backend)\n", live.Interface(), live.Backend())

	var sink *capture.Sink
	if o.Write != "" {
		so := o.sink
		so.Stdout = ios.Out
		so.LinkType, so.Snaplen, so.Interface = live.LinkType(), live.Snaplen(), live.Interface()
		// if_filter: the filter as a pcap expression (the built-in one's
		// equivalent when -f is not given).
		so.Filter = o.Filter
		if so.Filter == "" {
			so.Filter = capture.RoCEFilterExpr(o.PFC, ports...)
		}
		if sink, err = capture.NewSink(so); err != nil {
			return err
		}
	}
	// Summary lines go to stdout, unless it carries the packets (-w -).
	summaries := !o.Quiet && o.StatsEvery == 0 && o.Write != "-"

	src := stream.Live(live)
	if o.Count > 0 {
		src.StopAfter(o.Count)
	}
	sigs := o.signals
	if sigs == nil {
		ch := make(chan os.Signal, 2)
		signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
		defer signal.Stop(ch)
		sigs = ch
	}
	start := time.Now()
	done := make(chan struct{})
	defer close(done)
	// A signal or -a duration stops the capture; what was received is
	// still written. If the output does not take it (a reader that does
	// not read, a stalled file system) the capture is abandoned a second
	// later, or at a second signal: the writes block this goroutine, so
	// the watch reports what reached the output and exits.
	exit := o.exit
	if exit == nil {
		exit = os.Exit
	}
	go func() {
		var timeout <-chan time.Time
		if o.duration > 0 {
			t := time.NewTimer(o.duration)
			defer t.Stop()
			timeout = t.C
		}
		select {
		case <-sigs:
		case <-timeout:
		case <-done:
			return
		}
		src.Stop()
		grace := time.NewTimer(stallGrace)
		defer grace.Stop()
		select {
		case <-done:
			return
		case <-sigs:
		case <-grace.C:
		}
		st, _ := live.Stats()
		msg := fmt.Sprintf("rocetap: %s; the output is not taking packets (a reader that stopped reading, or a stalled file system): stopping without it", finalStats(st, nil, live.Interface()))
		if sink != nil {
			_, del := sink.Progress()
			to := o.Write
			if to == "-" {
				to = ""
			}
			msg += fmt.Sprintf("; %d packets reached %s, %d did not", del, outDesc(to), st.Received-min(del, st.Received))
		}
		fmt.Fprintln(ios.ErrOut, msg)
		exit(ExitOutput)
	}()

	// Status lines (--stats-every), whether packets come or not.
	if o.StatsEvery > 0 {
		every := time.Duration(o.StatsEvery * float64(time.Second))
		go func() {
			t := time.NewTicker(every)
			defer t.Stop()
			var lastPkts uint64
			last := start
			for {
				select {
				case <-done:
					return
				case now := <-t.C:
					st, _ := live.Stats()
					fmt.Fprintln(ios.ErrOut, statusLine(st, st.Received-lastPkts, now.Sub(last)))
					lastPkts, last = st.Received, now
				}
			}
		}()
	}
	lastFlush := start

	dec, _ := (&readOptions{Decode: o.Decode}).decoder()
	// The summaries show a ULP's operations, and -Y tests the fields of
	// the analysis, with a tracker.
	var tr *flow.Tracker
	if summaries && (len(decodeAs) > 0 || stream.NeedsTracker(nil, disp)) {
		tr = flow.New(flow.Options{DecodeAs: decodeAs, MaxSessions: defaultMaxSessions})
		dec = stream.PrefetchDecoder(dec, tr)
	}
	p := new(decode.Packet)
	var line []byte
	capErr := src.Read(func(pk *stream.Packet) error {
		if sink != nil {
			if err := sink.WritePacket(pk.Info, pk.Data); err != nil {
				live.Stop()
				if errors.Is(err, capture.ErrAutostop) {
					return errAutostop
				}
				return err
			}
		}
		now := time.Now()
		if summaries {
			pk.SetFrame(&p.Frame)
			dec.Decode(p, pk.Data, pk.Info.LinkType)
			if tr != nil {
				tr.Track(p)
			}
			if disp == nil || disp.Match(p) {
				line = printer.AppendSummary(line[:0], p)
				line = append(line, '\n')
				ios.Out.Write(line)
			}
		}
		if sink != nil && now.Sub(lastFlush) > 100*time.Millisecond {
			if err := sink.Flush(); err != nil {
				live.Stop()
				return err
			}
			lastFlush = now
		}
		return nil
	})
	if capErr == errAutostop {
		capErr = nil // -a filesize/files: a normal end
	}
	st, statErr := live.Stats()
	if sink != nil {
		if err := sink.Close(st, start); err != nil && capErr == nil {
			capErr = err
		}
	}
	final := finalStats(st, statErr, live.Interface())
	if we := (*capture.WriteError)(nil); errors.As(capErr, &we) {
		// The capture went on receiving after the write failed: say
		// what the file holds too.
		final += fmt.Sprintf("; %d of them are in %s (writing failed after them)", we.Packets, outDesc(we.File))
	}
	fmt.Fprintln(ios.ErrOut, final)
	if sink != nil && o.Write != "-" {
		if files := sink.Files(); len(files) > 1 {
			fmt.Fprintf(ios.ErrOut, "files: %s\n", strings.Join(files, ", "))
		}
	}
	return capErr
}

// stallGrace is how long a stopped capture waits for its output to take
// what is left before it is abandoned (the capture ends within a second of the signal).
const stallGrace = 500 * time.Millisecond

// outDesc names a capture output: a file, or standard output.
func outDesc(file string) string {
	if file == "" {
		return "standard output"
	}
	return file
}

// errAutostop ends the read loop when the sink meets -a filesize or -a
// files.
var errAutostop = errors.New("autostop")

// statusLine is --stats-every's line: "packets 1234, bytes 567890, 1200
// packets/s, ring-full drops 0, interface drops 0".
func statusLine(st capture.LiveStats, pkts uint64, d time.Duration) string {
	rate := 0.0
	if d > 0 {
		rate = float64(pkts) / d.Seconds()
	}
	s := fmt.Sprintf("packets %d, bytes %d, %.0f packets/s, ring-full drops %d", st.Received, st.Bytes, rate, st.KernelDrops)
	if st.HasIfDrops {
		s += fmt.Sprintf(", interface drops %d", st.IfDrops)
	}
	return s
}

// finalStats is the line printed when the capture ends, as tshark and
// dumpcap print theirs.
func finalStats(st capture.LiveStats, err error, iface string) string {
	s := fmt.Sprintf("%d packets captured on %s, %d dropped by the kernel (ring full)", st.Received, iface, st.KernelDrops)
	if st.HasIfDrops {
		s += fmt.Sprintf(", %d dropped by the interface", st.IfDrops)
	}
	if err != nil {
		s += " (statistics: " + err.Error() + ")"
	}
	return s
}
