package cli

import (
	"errors"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"slices"
	"strings"
	"syscall"

	"github.com/rocetap/rocetap/capture"
	"github.com/rocetap/rocetap/decode"
	"github.com/rocetap/rocetap/decode/filter"
	"github.com/rocetap/rocetap/flow"
	"github.com/rocetap/rocetap/hca"
	"github.com/rocetap/rocetap/internal/outfile"
	"github.com/rocetap/rocetap/internal/printer"
	"github.com/rocetap/rocetap/stream"
	"github.com/spf13/cobra"
)

// DecodeOptions are the flags of `rocetap decode`.
type DecodeOptions struct {
	readOptions
	Count        int      // -c: read this many packets (tshark: filtered-out ones count)
	Show         int      // -a packets:N: stop after this many packets shown
	Output       string   // -T text|fields|json
	Fields       []string // -e
	E            []string // -E
	Verbose      bool     // -V
	Filter       string   // -Y
	MPT          string   // --mpt: check remote accesses against this MPT file
	Write        string   // -w: write the packets -Y keeps to this capture file
	WriteAs      string   // -F: pcapng or pcap
	Print        bool     // -P: print packets while writing them
	Force        bool     // --force: -w may replace an existing file
	LineBuffered bool     // -l: flush the output after every packet
	Hex          bool     // -x: hex and ASCII dump of every packet
	Quiet        bool     // -q: no packet output
	TimeFormat   string   // -t: r, a, ad, d, dd, e, u, ud
	modelFlags
	trackFlags
	autostop []string // -a, parsed into Show
}

// NewCmdDecode builds `rocetap decode`. runF replaces the run function in
// tests of flag parsing.
func NewCmdDecode(ios IO, runF func(*DecodeOptions) error) *cobra.Command {
	opts := &DecodeOptions{}
	cmd := &cobra.Command{
		Use:   "decode -r FILE",
		Short: "Decode a capture like tshark: summary lines, -T fields, -T json or -V",
		Long: `Decode every packet of a capture (pcap, pcapng or ERF; -r - reads stdin).

Without -T, prints one summary line per packet (number, time, source,
destination, protocol, length, info). -V prints every header and field with
its byte range. -T fields prints the -e fields tab-separated, formatted as
tshark prints them. -T json prints a JSON array, one packet object per line.`,
		Example: `  rocetap decode -r read_atomic.pcap
  rocetap decode -r cap.pcap -T fields -e frame.number -e infiniband.bth.opcode -e infiniband.bth.psn
  rocetap decode -r cap.pcap -V -c 1
  rocetap decode -r cap.pcap -Y 'infiniband.aeth.syndrome & 0x60 == 0x60 or infiniband.bth.opcode in {12..16}'
  rocetap decode -r err_write_oob.pcap --mpt err_write_oob.mpt.json -Y rocetap.mpt.violation
  tcpdump -i eth0 -w - udp port 4791 | rocetap decode -r -`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			switch opts.Output {
			case "text", "fields", "json", "ek":
			default:
				return fmt.Errorf("-T %q: want text, fields, json or ek", opts.Output)
			}
			if opts.Count < 0 {
				return fmt.Errorf("-c %d: want a positive packet count", opts.Count)
			}
			for _, a := range opts.autostop {
				k, n, err := parseKV("-a", a)
				if err != nil {
					return err
				}
				if k != "packets" {
					return fmt.Errorf("-a %q: reading a file, decode stops on packets:N (packets shown); -c N reads N packets", a)
				}
				opts.Show = int(n)
			}
			opts.Read = opts.Count
			if opts.Write == "" && (opts.Print && !opts.Hex || opts.Force || cmd.Flags().Changed("file-format")) {
				return errors.New("-P goes with -w FILE or -x; -F and --force with -w FILE")
			}
			if opts.Write == "-" {
				return errors.New("-w -: rocetap decode writes capture files; to stream pcap, use rocetap capture -w - or rocetap edit")
			}
			if opts.Output != "fields" && opts.Output != "ek" && len(opts.Fields) > 0 {
				return fmt.Errorf("-e needs -T fields or -T ek (for example: -T fields -e %s)", opts.Fields[0])
			}
			if runF != nil {
				return runF(opts)
			}
			return decodeRun(opts, ios)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&opts.Path, "read-file", "r", "", "capture file to read (pcap, pcapng, ERF; - for stdin)")
	f.StringVar(&opts.Format, "format", "", "capture format when it cannot be detected: pcap, pcapng or erf")
	f.StringArrayVarP(&opts.Decode, "decode-as", "d", nil, "also decode a UDP port as RoCEv2 (udp.port==PORT,infiniband), or a QP's SENDs as an upper-layer protocol (infiniband.bth.destqp==QP,PROTO; PROTO nvme-rdma, rpcordma, iser, smb_direct)")
	f.IntVarP(&opts.Count, "count", "c", 0, "read only this many packets (as tshark's -c, packets -Y leaves out count; see -a packets:N)")
	f.StringArrayVarP(&opts.autostop, "autostop", "a", nil, "packets:N: stop after N packets are shown (as tshark's -a packets:N, only packets -Y keeps count)")
	f.StringVarP(&opts.Output, "output", "T", "text", "output format: text, fields, json or ek")
	f.StringArrayVarP(&opts.Fields, "field", "e", nil, "`FIELD` to print with -T fields (repeatable; rocetap fields lists them)")
	f.StringArrayVarP(&opts.E, "fields-option", "E", nil, "-T fields option: header=y|n, separator=/t|/s|C, occurrence=f|l|a, aggregator=C, quote=d|s|n")
	f.BoolVarP(&opts.Verbose, "verbose", "V", false, "print the full tree of every header and field")
	f.StringVarP(&opts.Filter, "display-filter", "Y", "", "show only packets matching this Wireshark display `FILTER` (rocetap filter check tests one)")
	f.StringVar(&opts.MPT, "mpt", "", mptFlagUsage)
	f.StringVarP(&opts.Write, "write", "w", "", "write the packets -Y keeps to this capture `FILE` (as tshark -w; nothing is printed unless -P)")
	f.StringVarP(&opts.WriteAs, "file-format", "F", "pcapng", "format of -w: pcapng or pcap")
	f.BoolVarP(&opts.Print, "print", "P", false, "with -w, print the packets too")
	f.BoolVar(&opts.Force, "force", false, "let -w replace an existing file (never the capture being read)")
	f.BoolVarP(&opts.Hex, "hex", "x", false, "print a hex and ASCII dump of every packet (alone, as tshark -x; with -V after the tree; with -P after the summary line)")
	f.BoolVarP(&opts.Quiet, "quiet", "q", false, "print no packets (for -w, or the exit status)")
	f.StringVarP(&opts.TimeFormat, "time-format", "t", "r", "summary time: r relative, a absolute, ad absolute with date, d delta, dd delta from the previous shown, e epoch, u UTC, ud UTC with date (as tshark -t)")
	f.BoolVarP(&opts.LineBuffered, "line-buffered", "l", false, "flush the output after every packet (as tshark -l); a pipe on stdin is flushed at least every 100 ms anyway")
	opts.modelFlags.register(f)
	opts.trackFlags.register(f)
	return cmd
}

// decodeOutput is how decode prints: a renderer per worker, what goes
// between two packets and after the last.
type decodeOutput struct {
	newRender func() stream.Render
	skipCRCs  bool   // no output depends on the ICRC/VCRC check
	workers   int    // 0: one per CPU
	sep       []byte // written between two packets' outputs (JSON's ",\n")
	closing   func(n int)
}

func decodeRun(opts *DecodeOptions, ios IO) error {
	var flt *filter.Filter
	if opts.Filter != "" {
		// Compile before reading anything: a bad filter fails at once.
		var err error
		if flt, err = filter.Compile(opts.Filter); err != nil {
			return err
		}
	}
	if err := opts.trackFlags.check(opts.Decode); err != nil {
		return err
	}
	mpt, err := trackMPT(opts.MPT, &opts.modelFlags)
	if err != nil {
		return err
	}
	if opts.Write != "" {
		return decodeWrite(opts, ios, flt, mpt)
	}
	out := newOutBuf(ios.Out)
	out.each = opts.LineBuffered
	opts.readOptions.out = out
	defer out.flush() // its write error reaches Main through standard output's watch (outWatch)
	var do decodeOutput
	switch {
	case opts.Output == "fields":
		fo := printer.DefaultFieldsOptions()
		for _, e := range opts.E {
			if err := fo.ParseE(e); err != nil {
				return err
			}
		}
		fp, err := printer.NewFieldsPrinter(opts.Fields, fo)
		if err != nil {
			return err
		}
		if fo.Header {
			out.b = fp.AppendHeader(out.b)
		}
		do.newRender = func() stream.Render {
			fp := fp.Clone()
			return fp.Append
		}
		// Like tshark -T fields, build only what is asked for: the CRC
		// check feeds only rocetap.* fields.
		do.skipCRCs = true
		// Printing a few fields costs about what reading costs, so one
		// reader and one worker balance; a second worker would only take
		// CPU from the reader (measured on 2 cores, bench/RESULTS.md).
		do.workers = max(1, runtime.GOMAXPROCS(0)-1)
		for _, f := range opts.Fields {
			if strings.HasPrefix(f, "rocetap") {
				do.skipCRCs = false
			}
		}
	case opts.Output == "json":
		out.b = append(out.b, "[\n"...)
		do.sep = []byte(",\n")
		do.newRender = func() stream.Render { return printer.NewJSONPrinter().Append }
		do.closing = func(n int) {
			if n > 0 {
				out.b = append(out.b, '\n')
			}
			out.b = append(out.b, "]\n"...)
		}
	case opts.Output == "ek":
		ep, err := printer.NewEKPrinter(opts.Fields)
		if err != nil {
			return err
		}
		do.newRender = func() stream.Render { return ep.Clone().Append }
	case opts.Quiet && !opts.Hex:
		// -q: no packet output (the exit status, -w and errors remain).
		do.newRender = func() stream.Render {
			return func(dst []byte, _ *decode.Packet) []byte { return dst }
		}
	case opts.Verbose:
		do.sep = []byte("\n")
		if opts.Hex {
			do.sep = nil // the dump ends with a blank line
		}
		do.newRender = func() stream.Render {
			v := printer.NewVerbose()
			return func(dst []byte, p *decode.Packet) []byte {
				dst = v.Append(dst, p)
				if opts.Hex {
					dst = printer.AppendHexDump(append(dst, '\n'), p)
				}
				return dst
			}
		}
	default:
		// As tshark: -x alone prints the dump; with -P the summary line,
		// a blank line and the dump.
		summary, hexdump := !opts.Hex || opts.Print, opts.Hex
		tf, err := printer.ParseTimeFormat(opts.TimeFormat)
		if err != nil {
			return err
		}
		do.newRender = func() stream.Render {
			var prevShown int64 // -t dd: the summary runs in capture order (tracked)
			return func(dst []byte, p *decode.Packet) []byte {
				if summary {
					dst = append(printer.AppendSummaryTime(dst, p, tf, prevShown), '\n')
					prevShown = p.Frame.Time.UnixNano()
					if hexdump {
						dst = append(dst, '\n')
					}
				}
				if hexdump {
					dst = printer.AppendHexDump(dst, p)
				}
				return dst
			}
		}
	}
	if flt != nil {
		for _, f := range flt.Fields() {
			if strings.HasPrefix(f.Abbrev, "rocetap") {
				do.skipCRCs = false // the filter reads what the check sets
			}
		}
	}
	var n int
	if opts.Output != "fields" || mpt != nil || stream.NeedsTracker(opts.Fields, flt) {
		// The summary, -V and JSON always show the tracker's analysis
		// (like Wireshark's TCP analysis), and so does everything with
		// --mpt; -T fields and -Y only when they name a
		// rocetap.session/msg/analysis/expert/mpt field. Every packet goes
		// through the tracker in order, then the filter and the printer.
		render := do.newRender()
		// One first pass learns what comes after a packet: the response
		// to a MAD request, a ULP command's completion, data and latency.
		mad, ulp := needsMADAnswers(opts.Fields, flt), needsULPLinks(opts, flt)
		var first *flow.Tracker
		first, err = firstPass(&opts.readOptions, &opts.trackFlags, ios, do.skipCRCs, mpt, mad, ulp)
		if err != nil {
			return err
		}
		var answers map[int]int
		var prior *flow.Tracker // the ULP linkers read it only when it kept every command
		if first != nil {
			if mad {
				answers = first.MADAnswers()
			}
			if ulp {
				prior = first
			}
		}
		_, err = runTracked(&opts.readOptions, ios, do.skipCRCs, stream.TrackOptions{Pass: stream.Pass{
			Tracker: flow.New(opts.trackFlags.options(flow.Options{MPT: mpt, MADAnswers: answers, Prior: prior})),
			Filter:  flt,
			Limit:   opts.Show,
			Each: func(p *decode.Packet) bool {
				out.b = render(out.next(n, do.sep), p)
				n++
				out.maybeFlush()
				return out.err == nil
			},
		}})
		if err == nil {
			err = out.err
		}
	} else {
		n, err = runParallel(&opts.readOptions, ios, do, flt, opts.Show, out)
	}
	if err != nil && n == 0 && !isDamaged(err) {
		// Nothing was read (no such file, not a capture): print
		// nothing, not even the JSON array's "[" or the fields header.
		out.b = out.b[:0]
		return err
	}
	if do.closing != nil {
		do.closing(n) // JSON: a valid document whatever happened
	}
	return err
}

// runParallel decodes and prints on one worker per CPU (stream's
// Parallel), in file order.
func runParallel(o *readOptions, ios IO, do decodeOutput, flt *filter.Filter, limit int, out *outBuf) (int, error) {
	dec, src, err := openSource(o, ios, do.skipCRCs)
	if err != nil {
		return 0, err
	}
	defer src.Close()
	n, err := src.Parallel(stream.ParallelOptions{Decoder: dec, NewRender: do.newRender, Filter: flt, Limit: limit, Workers: do.workers,
		Inline: o.live,
		Emit: func(i int, b []byte) {
			out.b = append(out.next(i, do.sep), b...)
			out.emitted(o.live)
		},
		EmitInline: func(i int, render stream.Render, p *decode.Packet) {
			out.b = render(out.next(i, do.sep), p)
			out.emitted(o.live)
		},
		Flush: func() error { out.maybeFlush(); return out.err }})
	return n, exitCorrupt(err)
}

// decodeWrite is decode -w: the packets the filter keeps go to a capture
// file (pcapng or pcap, -F), as with tshark -r IN -Y F -w OUT; with -P
// their summary lines are printed too. The file appears only when it is
// complete (a capture damaged part-way gives a file of the packets before
// the damage, exit status 2); an existing file is replaced only with
// --force, the input never.
func decodeWrite(opts *DecodeOptions, ios IO, flt *filter.Filter, mpt *hca.Model) error {
	if slices.Index(capture.FileFormats, opts.WriteAs) < 0 {
		return fmt.Errorf("-F %q: want %s", opts.WriteAs, strings.Join(capture.FileFormats, " or "))
	}
	var inputs []string
	if opts.Path != "-" {
		inputs = append(inputs, opts.Path)
	}
	f, err := outfile.Create(opts.Write, outfile.Options{Force: opts.Force, Inputs: inputs, Flag: "-w"})
	if err != nil {
		return err
	}
	defer f.Abort() // nothing after Commit
	// A signal removes the unfinished file and leaves, even when a write
	// is stuck (a stalled file system): no half-written file is left.
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	finished := make(chan struct{})
	defer close(finished)
	go func() {
		select {
		case sig := <-sigs:
			os.Remove(f.Name())
			fmt.Fprintf(ios.ErrOut, "rocetap: %v: stopped; %s was not written\n", sig, opts.Write)
			os.Exit(ExitOutput)
		case <-finished:
		}
	}()
	fw, err := capture.NewFileWriter(f, opts.WriteAs, decode.LinkTypeEthernet)
	if err != nil {
		return err
	}
	var tr *flow.Tracker
	if mpt != nil || opts.Print || stream.NeedsTracker(nil, flt) {
		tr = flow.New(opts.trackFlags.options(flow.Options{MPT: mpt}))
	}
	out := newOutBuf(ios.Out)
	defer out.flush() // its write error reaches Main through outWatch
	var werr error
	_, err = runTracked(&opts.readOptions, ios, tr == nil, stream.TrackOptions{Pass: stream.Pass{
		Tracker: tr,
		Filter:  flt,
		Limit:   opts.Show,
		Each: func(p *decode.Packet) bool {
			fr := &p.Frame
			// The record's lengths: Len and CapLen are the frame's, which
			// for an ERF record exclude its header (as Wireshark's do).
			werr = fw.WritePacket(capture.PacketInfo{Timestamp: fr.Time, CaptureLength: len(fr.Data), Length: fr.Len - fr.CapLen + len(fr.Data),
				InterfaceIndex: fr.Interface, LinkType: fr.LinkType}, fr.Data)
			if werr != nil {
				werr = fmt.Errorf("-w %s: frame %d: %w", opts.Write, fr.Number, werr)
				return false
			}
			if opts.Print {
				out.b = append(printer.AppendSummary(out.b, p), '\n')
				out.maybeFlush()
			}
			return out.err == nil
		},
	}})
	switch {
	case werr != nil:
		return werr
	case err != nil && !isDamaged(err):
		return err
	case out.err != nil:
		return out.err
	}
	if cerr := fw.Close(); cerr != nil {
		return fmt.Errorf("-w %s: %w", opts.Write, cerr)
	}
	if cerr := f.Commit(); cerr != nil {
		return cerr
	}
	return err // nil, or a capture damaged part-way: the file holds the packets before the damage
}
