package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/rocetap/rocetap/capture"
	"github.com/rocetap/rocetap/decode/filter"
	"github.com/rocetap/rocetap/flow"
	"github.com/rocetap/rocetap/hca"
	"github.com/rocetap/rocetap/internal/gcphase"
	"github.com/rocetap/rocetap/internal/printer"
	"github.com/rocetap/rocetap/stream"
	"github.com/rocetap/rocetap/tui"
	"github.com/spf13/cobra"
)

// TUIOptions are the flags of `rocetap tui`.
type TUIOptions struct {
	Path      string   // FILE or -r
	Interface string   // -i
	Filter    string   // -Y
	MPT       string   // --mpt
	Decode    []string // -d udp.port==N,infiniband
	Format    string   // --format
	Time      string   // -t
	Columns   string   // --columns
	modelFlags
	trackFlags
	Backend string
}

// NewCmdTUI builds `rocetap tui`.
func NewCmdTUI(ios IO) *cobra.Command {
	opts := &TUIOptions{}
	cmd := &cobra.Command{
		Use:   "tui [FILE]",
		Short: "Browse a capture (or live traffic) in a terminal UI, like termshark",
		Long: `Open a capture in a terminal UI: the packet list, the detail tree of the
selected packet and its bytes, a display-filter bar (/), and the sessions
(s), expert (e), ladder (l), statistics (S) and MPT (M, with --mpt) views. FILE (or -r FILE) is a capture file; -r - reads a
stream from a pipe, shown as it arrives; -i IFACE captures live. The first
screen is drawn at once; the rest of the capture is indexed in the
background. ? lists the keys.`,
		Example: `  rocetap tui read_atomic.pcap
  rocetap tui -r big.pcapng -Y 'infiniband.aeth.syndrome & 0x60 == 0x60'
  tcpdump -i eth0 -w - udp port 4791 | rocetap tui -r -
  sudo rocetap tui -i eth0`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				if opts.Path != "" {
					return fmt.Errorf("two captures given (%s and -r %s): give one", args[0], opts.Path)
				}
				opts.Path = args[0]
			}
			switch {
			case opts.Path == "" && opts.Interface == "":
				return errors.New("no capture given: rocetap tui FILE, -r - for a stream, or -i IFACE to capture live")
			case opts.Path != "" && opts.Interface != "":
				return errors.New("give a capture file or an interface (-i), not both")
			}
			return tuiRun(opts, ios, nil)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&opts.Path, "read-file", "r", "", "capture file (- for a stream on stdin)")
	f.StringVarP(&opts.Interface, "interface", "i", "", "capture live on this interface")
	f.StringVarP(&opts.Filter, "display-filter", "Y", "", "display filter to start with")
	f.StringVar(&opts.MPT, "mpt", "", mptFlagUsage)
	f.StringArrayVarP(&opts.Decode, "decode-as", "d", nil, "also decode a UDP port as RoCEv2 (udp.port==PORT,infiniband), or a QP's SENDs as an upper-layer protocol (infiniband.bth.destqp==QP,PROTO), as decode")
	f.StringVar(&opts.Format, "format", "", "capture format when it cannot be detected: pcap, pcapng or erf (as decode)")
	f.StringVar(&opts.Columns, "columns", "", "the packet list's columns, in order: "+strings.Join(tui.ColumnNames, ",")+" and any field (rocetap fields), e.g. no,time,src,dst,info,infiniband.reth.va")
	f.StringVarP(&opts.Time, "time-format", "t", "r", "the Time column: r relative, a absolute, ad with date, d delta, dd delta from the previous shown, e epoch, u UTC, ud UTC with date (as decode -t)")
	f.StringVar(&opts.Backend, "backend", "", "live capture backend (see rocetap capture --help)")
	opts.modelFlags.register(f)
	opts.trackFlags.register(f)
	return cmd
}

// tuiRun opens the capture, starts indexing and runs the UI; configure,
// when set, adjusts the UI options (tests: a simulation screen).
func tuiRun(o *TUIOptions, ios IO, configure func(*tui.Options)) error {
	if err := o.trackFlags.check(o.Decode); err != nil {
		return err
	}
	dec, err := (&readOptions{Decode: o.Decode}).decoder()
	if err != nil {
		return err
	}
	tf, err := printer.ParseTimeFormat(o.Time)
	if err != nil {
		return err
	}
	if o.Columns != "" {
		if _, err := tui.ParseColumns(o.Columns); err != nil {
			return err
		}
	}
	if o.Filter != "" {
		if _, err := filter.Compile(o.Filter); err != nil {
			return err
		}
	}
	// The MPT, when given, is loaded for each tracker (the index's, and
	// those of stateful filters).
	if o.MPT != "" {
		if _, err := trackMPT(o.MPT, &o.modelFlags); err != nil {
			return err
		}
	}
	newTracker := func(onEvent func(*flow.Event)) *flow.Tracker {
		var m *hca.Model
		if o.MPT != "" {
			m, _ = trackMPT(o.MPT, &o.modelFlags)
		}
		return flow.New(o.trackFlags.options(flow.Options{MPT: m, OnEvent: onEvent, ULPOps: true}))
	}

	var ix *tui.Index
	var status func() string
	var cleanup []func()
	defer func() {
		for i := len(cleanup) - 1; i >= 0; i-- {
			cleanup[i]()
		}
	}()
	switch {
	case o.Interface != "":
		ix, status, err = tuiLive(o, &cleanup)
	case o.Path == "-":
		// The stream is spooled to a temporary file, which the index
		// reads as it grows.
		// A compressed stream is spooled decompressed: the index reads
		// packets back at their offsets.
		var in io.Reader
		if in, _, err = capture.Decompressed(ios.In); err != nil {
			return fmt.Errorf("reading the capture on stdin: %w", err)
		}
		var sp *stream.Spool
		if sp, err = stream.SpoolStream(in); err == nil {
			cleanup = append(cleanup, func() { sp.Close() })
			ix, err = tui.OpenSpool(sp)
		}
	default:
		ix, err = openTUIFile(o.Path, o.Format, &cleanup)
	}
	if err != nil {
		return err
	}
	cleanup = append(cleanup, func() { ix.Close() })
	if len(o.Decode) > 0 {
		ix.SetDecoder(dec)
	}
	uo := tui.Options{Index: ix, NewTracker: newTracker, Filter: o.Filter, Status: status, Follow: o.Interface != "" || o.Path == "-", TimeFormat: tf, Columns: o.Columns}
	if configure != nil {
		configure(&uo)
	}
	app := tui.New(uo)
	tui.AddStandardViews(app)
	go func() {
		// The index's heap, like analyze's tracker's, grows to what it
		// keeps with next to no garbage: at the default GOGC the
		// collector marked it all again each time it doubled. On a
		// million QP pairs (tuibench, 5 interleaved runs) indexing took
		// 1.241 CPU s at gcphase.Track against 1.377; peak RSS was 623 MB
		// either way (one run each, GOGC=400 set in the environment).
		// Not at gcphase.Grow, as analyze tracks until it evicts: the
		// index adds its 40 bytes a packet to the heap, which at 100,000
		// QP pairs ends past Grow's first collection (44 MB) and short of
		// Track's second (100 MB), so that Grow's one cycle marks more
		// than Track's: tuibench indexed 100k pairs in 0.146 CPU s against
		// 0.142, a million in 1.359 against 1.412 (7 and 5 interleaved
		// runs), the 100k row's ratio to its 8-pair capture 1.87× against
		// 1.75× (commit 4c72f2f, reverted).
		// internal/tools/tuibench builds the same way.
		defer gcphase.Set(gcphase.Track)()
		ix.Build(tui.BuildOptions{NewTracker: newTracker, Notify: app.Refresh, Every: 200 * time.Millisecond})
	}()
	// SIGTERM, SIGHUP (the terminal closed) and SIGINT end the UI like
	// Ctrl-C: the terminal is restored (alternate screen left, cursor
	// shown) and the deferred cleanup removes the spool.
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGHUP, os.Interrupt)
	defer signal.Stop(sigs)
	ended := make(chan struct{})
	defer close(ended)
	go func() {
		select {
		case <-sigs:
			app.Stop()
		case <-ended:
		}
	}()
	return app.Run()
}

// tuiLive captures into a spool file, which the index reads as it grows;
// status reports the capture's counters.
func tuiLive(o *TUIOptions, cleanup *[]func()) (*tui.Index, func() string, error) {
	live, err := capture.OpenLive(capture.LiveOptions{Interface: o.Interface, Promisc: true, Backend: o.Backend})
	if err != nil {
		return nil, nil, err
	}
	sp, err := stream.SpoolLive(live)
	if err != nil {
		return nil, nil, err
	}
	*cleanup = append(*cleanup, func() { sp.Close() })
	ix, err := tui.OpenSpool(sp)
	// The rate is the current one: over the last second or so, not the
	// average since the start.
	var mu sync.Mutex
	lastT, lastN, rate := time.Now(), uint64(0), 0.0
	status := func() string {
		st, _ := live.Stats()
		mu.Lock()
		defer mu.Unlock()
		if now := time.Now(); now.Sub(lastT) >= time.Second {
			rate = float64(st.Received-lastN) / now.Sub(lastT).Seconds()
			lastT, lastN = now, st.Received
		}
		return fmt.Sprintf("live %s: %d packets, %.0f/s, %d dropped by the kernel", live.Interface(), st.Received, rate, st.KernelDrops)
	}
	return ix, status, err
}

// openTUIFile indexes a capture file; a compressed one (gzip, zstd, LZ4)
// is decompressed into a spool first, since the index reads packets back
// at their offsets.
func openTUIFile(path, format string, cleanup *[]func()) (*tui.Index, error) {
	// An empty file, or one that is not a capture, is refused before the
	// UI opens, with decode's message (exit status 1).
	r, err := capture.OpenFormat(path, format)
	if err != nil {
		return nil, err
	}
	r.Close()
	f, err := os.Open(path)
	if err != nil {
		return tui.OpenIndex(path) // its error names the file and what to do
	}
	in, kind, err := capture.Decompressed(f)
	if err != nil || kind == "" {
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("reading capture %q: %w", path, err)
		}
		ix, err := tui.OpenIndex(path)
		if ix != nil {
			ix.SetFormat(format)
		}
		return ix, err
	}
	base := filepath.Base(path)
	if ext := filepath.Ext(base); ext == ".gz" || ext == ".zst" || ext == ".lz4" {
		base = strings.TrimSuffix(base, ext)
	}
	sp, err := stream.SpoolStreamAs(in, base)
	if err != nil {
		f.Close()
		return nil, err
	}
	*cleanup = append(*cleanup, func() { sp.Close(); f.Close() })
	return tui.OpenSpool(sp)
}
