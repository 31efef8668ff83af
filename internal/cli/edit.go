package cli

import (
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/rocetap/rocetap/internal/editcap"
	"github.com/rocetap/rocetap/internal/outfile"
	"github.com/spf13/cobra"
)

// EditOptions are the flags of `rocetap edit`.
type EditOptions struct {
	In      string // -r
	Out     string // -w
	Force   bool   // --force: -w may replace an existing file
	Drop    string // --drop LIST
	Dup     string // --dup LIST
	Swap    string // --swap LIST
	GoBackN bool   // --go-back-n
	// --time-shift, --time-drift: move timestamps as another clock would
	// stamp them.
	TimeShift time.Duration
	TimeDrift float64
}

// NewCmdEdit builds `rocetap edit`, a fault injector for testing the flow
// tracker.
func NewCmdEdit(ios IO) *cobra.Command {
	opts := &EditOptions{}
	cmd := &cobra.Command{
		Use:   "edit -r IN -w OUT [--drop LIST] [--dup LIST] [--swap LIST] [--go-back-n] [--time-shift D] [--time-drift PPM]",
		Short: "Inject faults (drop, duplicate, reorder, go-back-N loss) into a capture, to test the flow tracker",
		Long: `Write a copy of a capture with faults injected, like editcap -d and -D,
to test PSN analysis. LIST is 1-based frame numbers of the input and ranges,
such as 3,5-7.

  --drop LIST   remove the frames
  --dup LIST    insert an exact copy right after each frame, 1 µs later
  --swap LIST   exchange frame N and N+1 (timestamps stay in place, so the
                packets look reordered)
  --go-back-n   a dropped RC request is lost on the wire: after the next
                request of its QP, insert the responder's NAK (PSN sequence
                error), then the requester's retransmission from the lost
                PSN; the responder's answers to the lost PSNs follow it. A
                lost last request is retransmitted 10 ms after the end.
  --time-shift D   add D (e.g. 1.5s, -250us) to every timestamp, as
                editcap -t does
  --time-drift PPM a clock that gains PPM parts per million (negative:
                loses): a frame t after the first frame moves by
                t·PPM·1e-6 more. With both, t becomes
                t + D + (t − first)·PPM·1e-6, the clock rocetap path
                estimates between two captures.

The output is pcap. The report on standard output gives, for each fault,
the input frame ("in") and the output frames ("out") it produced.`,
		Example: `  rocetap edit -r write_imm.pcap -w lost.pcap --drop 8 --go-back-n
  rocetap edit -r cap.pcap -w out.pcap --drop 3,10-12 --dup 5 --swap 20
  rocetap edit -r b.pcapng -w b-skewed.pcap --time-shift 1.5s --time-drift 200`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return editRun(opts, ios)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&opts.In, "read-file", "r", "", "capture file to read (pcap, pcapng, ERF)")
	f.StringVarP(&opts.Out, "write-file", "w", "", "pcap file to write")
	f.BoolVar(&opts.Force, "force", false, "let -w replace an existing file (never the input)")
	f.StringVar(&opts.Drop, "drop", "", "frames to remove, e.g. 3,5-7")
	f.StringVar(&opts.Dup, "dup", "", "frames to duplicate")
	f.StringVar(&opts.Swap, "swap", "", "frames N to exchange with frame N+1")
	f.BoolVar(&opts.GoBackN, "go-back-n", false, "emulate the NAK and retransmission that follow a dropped RC request")
	f.DurationVar(&opts.TimeShift, "time-shift", 0, "add this to every timestamp (e.g. 1.5s, -250us)")
	f.Float64Var(&opts.TimeDrift, "time-drift", 0, "clock drift in parts per million from the first frame (e.g. 200, -50)")
	return cmd
}

func editRun(opts *EditOptions, ios IO) error {
	switch {
	case opts.In == "":
		return errors.New("no capture given: use -r FILE")
	case opts.In == "-":
		return errors.New("-r -: edit reads a file, not standard input; save the capture to a file first")
	case opts.Out == "":
		return errors.New("no output given: use -w FILE (a pcap file to create)")
	}
	var ops editcap.Ops
	var err error
	if ops.Drop, err = parseFrameList("--drop", opts.Drop); err != nil {
		return err
	}
	if ops.Dup, err = parseFrameList("--dup", opts.Dup); err != nil {
		return err
	}
	if ops.Swap, err = parseFrameList("--swap", opts.Swap); err != nil {
		return err
	}
	ops.GoBackN = opts.GoBackN
	ops.TimeShift, ops.TimeDriftPPM = opts.TimeShift, opts.TimeDrift
	if math.IsNaN(opts.TimeDrift) || math.IsInf(opts.TimeDrift, 0) || math.Abs(opts.TimeDrift) >= 1e6 {
		return fmt.Errorf("--time-drift %g: give parts per million, between -1000000 and 1000000", opts.TimeDrift)
	}
	if len(ops.Drop)+len(ops.Dup)+len(ops.Swap) == 0 && ops.TimeShift == 0 && ops.TimeDriftPPM == 0 {
		return errors.New("no fault given: use --drop, --dup or --swap with frame numbers like 3,5-7, or --time-shift/--time-drift")
	}
	if ops.GoBackN && len(ops.Drop) == 0 {
		return errors.New("--go-back-n changes what --drop does: give --drop with the RC requests to lose")
	}
	f, err := outfile.Create(opts.Out, outfile.Options{Force: opts.Force, Inputs: []string{opts.In}, Flag: "-w"})
	if err != nil {
		return err
	}
	defer f.Abort() // nothing after Commit
	frames, link, err := editcap.Read(opts.In)
	if err != nil {
		return err
	}
	out, rep, err := editcap.Apply(frames, ops)
	if err != nil {
		return err
	}
	if err := editcap.WritePcap(f, opts.Out, out, link); err != nil {
		return err
	}
	if err := f.Commit(); err != nil {
		return err
	}
	_, err = io.WriteString(ios.Out, rep.String())
	return err
}

// maxRange bounds one range of a frame list (a typo like 1-10000000000
// should not allocate gigabytes).
const maxRange = 1 << 24

// parseFrameList parses "3,5-7" into 3 5 6 7.
func parseFrameList(flag, s string) ([]int, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	var out []int
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := frameNumber(lo)
		if err != nil {
			return nil, fmt.Errorf("%s %q: %q is not a frame number: write 1-based numbers and ranges like 3,5-7", flag, s, part)
		}
		b := a
		if isRange {
			if b, err = frameNumber(hi); err != nil {
				return nil, fmt.Errorf("%s %q: %q is not a range of frame numbers: write ranges like 5-7", flag, s, part)
			}
			if b < a {
				return nil, fmt.Errorf("%s %q: range %s runs backwards: write %d-%d", flag, s, part, b, a)
			}
			if b-a >= maxRange {
				return nil, fmt.Errorf("%s %q: range %s is too large", flag, s, part)
			}
		}
		for n := a; n <= b; n++ {
			out = append(out, n)
		}
	}
	return out, nil
}

func frameNumber(s string) (int, error) {
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil || n < 1 {
		return 0, errors.New("not a frame number")
	}
	return n, nil
}
