package cli

import (
	"errors"
	"fmt"
	"time"

	"github.com/rocetap/rocetap/decode"
	"github.com/rocetap/rocetap/decode/filter"
	"github.com/rocetap/rocetap/internal/printer"
	"github.com/rocetap/rocetap/pathcmp"
	"github.com/spf13/cobra"
)

// PathOptions are the flags of `rocetap path`.
type PathOptions struct {
	Paths  []string // -r, twice: A then B
	Format string   // --format
	Decode []string // -d
	Output string   // -T text|json|fields
	Fields []string // -e
	E      []string // -E
	Filter string   // -Y (with -T fields)
	Window time.Duration
}

// NewCmdPath builds `rocetap path`, the comparison of two captures of the
// same traffic taken at two points.
func NewCmdPath(ios IO) *cobra.Command {
	opts := &PathOptions{}
	cmd := &cobra.Command{
		Use:   "path -r A -r B [-T text|json|fields] [-e FIELD ...] [-Y FILTER]",
		Short: "Compare captures of the same traffic taken at two points: clock offset and drift, one-way delay, where packets were lost, reordered, duplicated",
		Long: `Read two captures of the same traffic taken at two points (requester and
responder hosts, or a host and a switch mirror; link types and spans may
differ), match every packet seen at both (same flow, PSN, opcode and
ICRC), estimate the clock offset and drift of B against A from the
fastest packets of each direction (as NTP does), and report per session
and flow (one direction of a QP) the one-way delay between the points, packets lost
between them (path_loss), requests the responder NAKed, packets
reordered or duplicated between them, and delay spikes
(path_delay_spike).

  -T text     the report (default)
  -T json     the report as one JSON object
  -T fields   one line per frame with the -e fields, A's frames in A's
              order, then B's; rocetap.path.point says which capture a
              frame is from, frame.number is its number in its capture,
              and -Y selects frames (e.g. -Y rocetap.path.lost)`,
		Example: `  rocetap path -r host.pcapng -r mirror.pcapng
  rocetap path -r a.pcapng -r b.pcapng -T fields -e rocetap.path.point -e frame.number -e infiniband.bth.psn -e rocetap.path.delay -Y 'rocetap.path.expert'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return pathRun(opts, ios)
		},
	}
	f := cmd.Flags()
	f.StringArrayVarP(&opts.Paths, "read-file", "r", nil, "capture file, given twice: point A, then point B (pcap, pcapng, ERF)")
	f.StringVar(&opts.Format, "format", "", "capture file format when it cannot be detected: pcap, pcapng or erf")
	f.StringArrayVarP(&opts.Decode, "decode-as", "d", nil, "decode another UDP port as RoCEv2: udp.port==N,infiniband")
	f.StringVarP(&opts.Output, "output", "T", "text", "output format: text, json or fields")
	f.StringArrayVarP(&opts.Fields, "field", "e", nil, "`FIELD` to print with -T fields (repeatable; rocetap fields rocetap.path lists the comparison's)")
	f.StringArrayVarP(&opts.E, "fields-option", "E", nil, "-T fields option: header=y|n, separator=C, occurrence=f|l|a, aggregator=C, quote=d|s|n")
	f.StringVarP(&opts.Filter, "display-filter", "Y", "", "with -T fields: print only the frames matching this display filter")
	f.DurationVar(&opts.Window, "window", time.Second, "longest one-way delay between the points; copies of a PSN further apart are different packets")
	return cmd
}

func pathRun(opts *PathOptions, ios IO) error {
	if len(opts.Paths) != 2 {
		return fmt.Errorf("give two captures, -r A -r B (got %d)", len(opts.Paths))
	}
	for _, p := range opts.Paths {
		if p == "-" {
			return errors.New("-r -: path reads files, not standard input; save the capture to a file first")
		}
		if opts.Output == "fields" && !rereadable(p) {
			return fmt.Errorf("-r %s: not a regular file (a pipe or device), and -T fields reads each capture twice (to compare, then to print); save it to a file first", p)
		}
	}
	if opts.Window <= 0 {
		return fmt.Errorf("--window %v: give a positive duration such as 1s", opts.Window)
	}
	var (
		flt *filter.Filter
		fp  *printer.FieldsPrinter
		fo  = printer.DefaultFieldsOptions()
	)
	switch opts.Output {
	case "text", "json":
		if opts.Filter != "" || len(opts.Fields) > 0 {
			return fmt.Errorf("-Y and -e select frames for -T fields; the %s report covers every frame", opts.Output)
		}
	case "fields":
		if len(opts.Fields) == 0 {
			return errors.New("-T fields needs at least one -e FIELD")
		}
		for _, e := range opts.E {
			if err := fo.ParseE(e); err != nil {
				return err
			}
		}
		var err error
		if fp, err = printer.NewFieldsPrinter(opts.Fields, fo); err != nil {
			return err
		}
		if opts.Filter != "" {
			if flt, err = filter.Compile(opts.Filter); err != nil {
				return err
			}
		}
	default:
		return fmt.Errorf("-T %q: want text, json or fields", opts.Output)
	}

	var caps [2]*pathcmp.Capture
	var damaged error
	for i, p := range opts.Paths {
		ro := &readOptions{Path: p, Format: opts.Format, Decode: opts.Decode}
		dec, src, err := openSource(ro, ios, true)
		if err != nil {
			return err
		}
		caps[i], err = pathcmp.Read(p, src, dec)
		src.Close()
		if err != nil {
			if !isDamaged(err) {
				return err
			}
			damaged = exitCorrupt(err)
		}
	}
	r := pathcmp.Compare(caps[0], caps[1], pathcmp.Options{Window: opts.Window})

	out := newOutBuf(ios.Out)
	defer out.flush() // what was written before an early return
	switch opts.Output {
	case "text":
		// a flow at a time: a million QP pairs make two million
		t := printer.NewPathTable(r)
		out.b = t.AppendHead(printer.AppendPathHead(out.b, r))
		for _, f := range r.Flows {
			out.b = t.AppendRow(out.b, f)
			if out.maybeFlush(); out.err != nil {
				break // a closed pipe or a full disk: stop writing
			}
		}
		out.b = printer.AppendPathTail(out.b, r)
	case "json":
		head, tail := printer.PathJSONParts(r)
		out.b = append(out.b, head...)
		for i, f := range r.Flows {
			out.b = printer.AppendPathJSONFlow(out.b, i, f)
			if out.maybeFlush(); out.err != nil {
				break
			}
		}
		out.b = append(out.b, tail...)
	case "fields":
		if fo.Header {
			out.b = fp.AppendHeader(out.b)
		}
		for i, p := range opts.Paths {
			ro := &readOptions{Path: p, Format: opts.Format, Decode: opts.Decode}
			dec, src, err := openSource(ro, ios, false)
			if err != nil {
				return err
			}
			err = r.Each(uint8(i), src, dec, func(p *decode.Packet) error {
				if flt == nil || flt.Match(p) {
					out.b = fp.Append(out.b, p)
					out.maybeFlush()
				}
				return out.err
			})
			src.Close()
			if err != nil && !isDamaged(err) {
				if err == out.err {
					break
				}
				return err
			}
		}
	}
	out.flush()
	return errors.Join(damaged, out.err)
}
