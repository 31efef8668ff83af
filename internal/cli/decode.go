package cli

import (
	"fmt"
	"runtime"
	"strings"

	"github.com/rocetap/rocetap/decode"
	"github.com/rocetap/rocetap/decode/filter"
	"github.com/rocetap/rocetap/flow"
	"github.com/rocetap/rocetap/internal/printer"
	"github.com/rocetap/rocetap/stream"
	"github.com/spf13/cobra"
)

// DecodeOptions are the flags of `rocetap decode`.
type DecodeOptions struct {
	readOptions
	Count   int      // -c: stop after this many packets
	Output  string   // -T text|fields|json
	Fields  []string // -e
	E       []string // -E
	Verbose bool     // -V
	Filter  string   // -Y
	MPT     string   // --mpt: check remote accesses against this MPT file
	modelFlags
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
		Example: `  rocetap decode -r testdata/rxe/read_atomic.pcap
  rocetap decode -r cap.pcap -T fields -e frame.number -e infiniband.bth.opcode -e infiniband.bth.psn
  rocetap decode -r cap.pcap -V -c 1
  rocetap decode -r cap.pcap -Y 'infiniband.aeth.syndrome & 0x60 == 0x60 or infiniband.bth.opcode in {12..16}'
  rocetap decode -r testdata/rxe/err_write_oob.pcap --mpt testdata/rxe/err_write_oob.mpt.json -Y rocetap.mpt.violation
  tcpdump -i eth0 -w - udp port 4791 | rocetap decode -r -`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			switch opts.Output {
			case "text", "fields", "json":
			default:
				return fmt.Errorf("-T %q: want text, fields or json", opts.Output)
			}
			if opts.Output != "fields" && len(opts.Fields) > 0 {
				return fmt.Errorf("-e needs -T fields (for example: -T fields -e %s)", opts.Fields[0])
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
	f.StringArrayVarP(&opts.Decode, "decode-as", "d", nil, "also decode a UDP port as RoCEv2: udp.port==PORT,infiniband")
	f.IntVarP(&opts.Count, "count", "c", 0, "stop after this many packets")
	f.StringVarP(&opts.Output, "output", "T", "text", "output format: text, fields or json")
	f.StringArrayVarP(&opts.Fields, "field", "e", nil, "field to print with -T fields (repeatable; see `rocetap fields`)")
	f.StringArrayVarP(&opts.E, "fields-option", "E", nil, "-T fields option: header=y|n, separator=/t|/s|C, occurrence=f|l|a, aggregator=C, quote=d|s|n")
	f.BoolVarP(&opts.Verbose, "verbose", "V", false, "print the full tree of every header and field")
	f.StringVarP(&opts.Filter, "display-filter", "Y", "", "show only packets matching this Wireshark display filter (see `rocetap filter check`)")
	f.StringVar(&opts.MPT, "mpt", "", mptFlagUsage)
	opts.modelFlags.register(f)
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
	mpt, err := trackMPT(opts.MPT, &opts.modelFlags)
	if err != nil {
		return err
	}
	out := newOutBuf(ios.Out)
	defer out.flush()
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
	case opts.Verbose:
		do.sep = []byte("\n")
		do.newRender = func() stream.Render {
			vals := make([]decode.Value, 0, 16)
			return func(dst []byte, p *decode.Packet) []byte { return printer.AppendVerbose(dst, p, vals) }
		}
	default:
		do.newRender = func() stream.Render {
			return func(dst []byte, p *decode.Packet) []byte {
				return append(printer.AppendSummary(dst, p), '\n')
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
		_, err = runTracked(&opts.readOptions, ios, do.skipCRCs, stream.TrackOptions{Pass: stream.Pass{
			Tracker: flow.New(flow.Options{MPT: mpt}),
			Filter:  flt,
			Limit:   opts.Count,
			Each: func(p *decode.Packet) bool {
				if n > 0 && do.sep != nil {
					out.b = append(out.b, do.sep...)
				}
				out.b = render(out.b, p)
				n++
				out.maybeFlush()
				return out.err == nil
			},
		}})
		if err == nil {
			err = out.err
		}
	} else {
		n, err = runParallel(&opts.readOptions, ios, do, flt, opts.Count, out)
	}
	if do.closing != nil && (err == nil || n > 0) {
		do.closing(n)
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
		Emit: func(i int, b []byte) {
			if i > 0 && do.sep != nil {
				out.b = append(out.b, do.sep...)
			}
			out.b = append(out.b, b...)
		},
		Flush: func() error { out.maybeFlush(); return out.err }})
	return n, exitCorrupt(err)
}
