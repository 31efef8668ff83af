package cli

import (
	"errors"
	"fmt"

	"github.com/rocetap/rocetap/internal/gcphase"
	"github.com/rocetap/rocetap/internal/printer"
	"github.com/rocetap/rocetap/pathcmp"
	"github.com/spf13/cobra"
)

// sessions, stats and expert with two capture points, -r A -r B: one
// code path for the three commands. Each capture is read once, tracked
// for its own report (as with one -r) while pathcmp collects it; then
// pathcmp.Compare compares the two, and the command prints A's report,
// B's report, and its part of the comparison.

// twoPointReport is a command's part of the comparison, as text and as
// the "two_points" JSON object.
type twoPointReport struct {
	text, json func([]byte, *pathcmp.Result) []byte
}

const twoPointsHelp = `

Two capture points: with -r A -r B (captures of the same traffic taken
at two points, as rocetap path reads them; link types and spans may
differ), each capture gets its usual report under a heading "Point A:
FILE", "Point B: FILE" (frame and session numbers are its own), followed by
what comparing the two found: sessions adds a line a session (numbered
as in A's report, B:N for those only B saw) with packets matched, lost,
NAKed, duplicated and reordered between the points, those only one point
saw, and the one-way delay median and p99 each way; stats adds a "Two
capture points" section (clock offset and drift of B against A, each
direction's counts and delays, packets only one point saw); expert adds
path_loss and path_delay_spike events, each naming its capture (A frame
N, B frame N). -T json: {"points": [{"point", "file", "report": the usual
JSON}, ...], "two_points": {...}}. -Y and -r - take one capture only;
--window as in rocetap path.`

// twoPointsRun runs a report command on -r A -r B (and rejects what
// cannot be done with two captures).
func twoPointsRun(cmd *cobra.Command, opts *AnalyzeOptions, ios IO, run func(*analysis, *AnalyzeOptions, *outBuf), two twoPointReport) error {
	name := cmd.Name()
	switch n := len(opts.Paths); {
	case n > 2:
		return fmt.Errorf("-r given %d times: give one capture (-r FILE), or two captures of the same traffic taken at two points (-r A -r B)", n)
	case n < 2:
		return fmt.Errorf("--window is for two capture points: give -r A -r B, or leave --window out")
	}
	for _, p := range opts.Paths {
		if p == "-" {
			return fmt.Errorf("-r -: with two capture points each is read from a file; save the stream to a file first, with rocetap capture -w FILE or tcpdump -w FILE")
		}
	}
	if opts.Filter != "" {
		return fmt.Errorf("-Y with -r A -r B: the comparison covers every packet; run rocetap %s -r FILE -Y FILTER on one capture, or select compared packets with rocetap path -r A -r B -T fields -e FIELD -Y FILTER", name)
	}
	if opts.Window <= 0 {
		return fmt.Errorf("--window %v: give a positive duration such as 1s", opts.Window)
	}
	var (
		ans     [2]*analysis
		caps    [2]*pathcmp.Capture
		damaged error
	)
	defer gcphase.Set(gcphase.Grow)() // as for analyze's one capture, for each
	for i, p := range opts.Paths {
		gcphase.Switch(gcphase.Grow) // (the first capture's tracker may have evicted)
		o := *opts
		o.Path, o.collect = p, pathcmp.NewCapture(p)
		an, err := analyze(&o, ios)
		if an == nil {
			return fmt.Errorf("point %s: %w", pathcmp.PointName(uint8(i)), err)
		}
		if err != nil && damaged == nil {
			damaged = fmt.Errorf("point %s (%s): %w", pathcmp.PointName(uint8(i)), p, err)
		}
		ans[i], caps[i] = an, o.collect
	}
	defer gcReportPhase()() // the comparison and the report make garbage
	r := pathcmp.Compare(caps[0], caps[1], pathcmp.Options{Window: opts.Window})

	out := newOutBuf(ios.Out)
	asJSON := opts.Output == "json"
	for i, p := range opts.Paths {
		point := uint8(i)
		if asJSON {
			out.b = printer.AppendPointJSONHead(out.b, point, p)
		} else {
			out.b = printer.AppendPointHeading(out.b, point, p)
		}
		o := *opts
		o.Path = p
		run(ans[i], &o, out)
		if asJSON {
			out.b = printer.AppendPointJSONTail(out.b, point)
		}
	}
	if asJSON {
		out.b = printer.AppendPointsJSONEnd(two.json(out.b, r))
	} else {
		out.b = two.text(out.b, r)
	}
	out.flush()
	return errors.Join(damaged, out.err)
}
