package cli

import (
	"fmt"
	"runtime"
	"strings"

	"github.com/rocetap/rocetap/decode"
	"github.com/rocetap/rocetap/decode/filter"
	"github.com/rocetap/rocetap/flow"
	"github.com/rocetap/rocetap/hca"
	"github.com/rocetap/rocetap/internal/printer"
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

func decodeRun(opts *DecodeOptions, ios IO) error {
	po := pipelineOptions{limit: opts.Count}
	if opts.Filter != "" {
		// Compile before reading anything: a bad filter fails at once.
		flt, err := filter.Compile(opts.Filter)
		if err != nil {
			return err
		}
		po.filter = flt
	}
	mpt, err := trackMPT(opts.MPT, &opts.modelFlags)
	if err != nil {
		return err
	}
	out := newOutBuf(ios.Out)
	defer out.flush()
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
		po.newRender = func() renderer {
			fp := fp.Clone()
			return fp.Append
		}
		// Like tshark -T fields, build only what is asked for: the CRC
		// check feeds only rocetap.* fields.
		po.skipCRCs = true
		// Printing a few fields costs about what reading costs, so one
		// reader and one worker balance; a second worker would only take
		// CPU from the reader (measured on 2 cores, bench/RESULTS.md).
		po.workers = max(1, runtime.GOMAXPROCS(0)-1)
		for _, f := range opts.Fields {
			if strings.HasPrefix(f, "rocetap") {
				po.skipCRCs = false
			}
		}
	case opts.Output == "json":
		out.b = append(out.b, "[\n"...)
		po.sep = []byte(",\n")
		po.newRender = func() renderer {
			vals := make([]decode.Value, 0, 16)
			return func(dst []byte, p *decode.Packet) []byte { return printer.AppendJSON(dst, p, vals) }
		}
		po.closing = func(n int) {
			if n > 0 {
				out.b = append(out.b, '\n')
			}
			out.b = append(out.b, "]\n"...)
		}
	case opts.Verbose:
		po.sep = []byte("\n")
		po.newRender = func() renderer {
			vals := make([]decode.Value, 0, 16)
			return func(dst []byte, p *decode.Packet) []byte { return printer.AppendVerbose(dst, p, vals) }
		}
	default:
		po.newRender = func() renderer {
			return func(dst []byte, p *decode.Packet) []byte {
				return append(printer.AppendSummary(dst, p), '\n')
			}
		}
	}
	if po.filter != nil {
		for _, f := range po.filter.Fields() {
			if strings.HasPrefix(f.Abbrev, "rocetap") {
				po.skipCRCs = false // the filter reads what the check sets
			}
		}
	}
	var n int
	if needsTracker(opts.Output != "fields" || mpt != nil, opts.Fields, po.filter) {
		n, err = decodeTracked(opts, ios, po, out, mpt)
	} else {
		n, err = runPipeline(&opts.readOptions, ios, po, out)
	}
	if po.closing != nil && (err == nil || n > 0) {
		po.closing(n)
	}
	return err
}

// needsTracker reports whether the output shows session analysis: the
// summary, -V and JSON always do (like Wireshark's TCP analysis), and so
// does everything with --mpt; -T fields and -Y only when they name a
// rocetap.session/msg/analysis/expert/mpt field.
func needsTracker(always bool, fields []string, flt *filter.Filter) bool {
	if always {
		return true
	}
	for _, name := range fields {
		if f := decode.FieldByName(name); f != nil && f.Stateful {
			return true
		}
	}
	if flt != nil {
		for _, f := range flt.Fields() {
			if f.Stateful {
				return true
			}
		}
	}
	return false
}

// decodeTracked is decode's path when the output needs the tracker: every
// packet goes through it in order, then the filter and the printer.
// With mpt, every remote access is checked against it.
func decodeTracked(opts *DecodeOptions, ios IO, po pipelineOptions, out *outBuf, mpt *hca.Model) (int, error) {
	render := po.newRender()
	written := 0
	_, err := runTracked(&opts.readOptions, ios, trackOptions{
		tracker:  flow.New(flow.Options{MPT: mpt}),
		filter:   po.filter,
		skipCRCs: po.skipCRCs,
		limit:    opts.Count,
		each: func(p *decode.Packet) bool {
			if written > 0 && po.sep != nil {
				out.b = append(out.b, po.sep...)
			}
			out.b = render(out.b, p)
			written++
			out.maybeFlush()
			return out.err == nil
		},
	})
	if err == nil {
		err = out.err
	}
	return written, err
}
