// Package cli holds rocetap's cobra commands. Commands parse flags, wire
// packages together, print and choose exit statuses; the logic lives
// elsewhere: reading, numbering, decoding and tracking packets in stream/
// (over capture/, decode/ and flow/), output in internal/printer.
package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"runtime/pprof"
	"strings"

	"github.com/rocetap/rocetap/decode"
	"github.com/rocetap/rocetap/internal/outfile"
	"github.com/spf13/cobra"
)

// IO is where a command reads and writes; tests use buffers.
type IO struct {
	In          io.Reader
	Out, ErrOut io.Writer
	// ErrIsTerminal says stderr is a terminal (progress is shown only then).
	ErrIsTerminal bool
}

// StdIO returns the process's standard streams.
func StdIO() IO {
	return IO{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr, ErrIsTerminal: isTerminal(os.Stderr)}
}

func isTerminal(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// Version is set at build time with -ldflags "-X github.com/rocetap/rocetap/internal/cli.Version=...";
// when it is not, --version reads the build info (version).
var Version = ""

// version is what --version prints: Version, or the module version and
// the VCS revision the binary was built from (go build and go install
// record them), "+dirty" when the tree had changes.
func version() string {
	if Version != "" {
		return Version
	}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown (no build information in the binary)"
	}
	v := bi.Main.Version
	if v == "" || v == "(devel)" {
		v = "devel"
	}
	var rev, at, dirty string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.time":
			at = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				dirty = "+dirty"
			}
		}
	}
	if rev != "" {
		if len(rev) > 12 {
			rev = rev[:12]
		}
		v += " (revision " + rev + dirty
		if at != "" {
			v += ", " + at
		}
		v += ")"
	}
	return v + ", " + bi.GoVersion
}

// NewRootCmd builds the rocetap command tree.
func NewRootCmd(ios IO) *cobra.Command {
	root, _ := newRootCmd(ios)
	return root
}

// newRootCmd builds the command tree, and what stops a --cpuprofile
// profile and writes it (after a command that failed too: cobra's
// post-run hooks run only after one that succeeded).
func newRootCmd(ios IO) (*cobra.Command, func()) {
	root := &cobra.Command{
		Use:   "rocetap",
		Short: "Wireshark for RDMA: decode and analyze RoCEv2, RoCEv1 and InfiniBand captures",
		Long: `rocetap decodes every InfiniBand transport header in RoCEv2, RoCEv1 and
native InfiniBand captures, with Wireshark's field names and tshark's flags.`,
		Version:       version(),
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	var cpuProfile string
	root.PersistentFlags().StringVar(&cpuProfile, "cpuprofile", "", "write a CPU profile to this file (for go tool pprof)")
	_ = root.PersistentFlags().MarkHidden("cpuprofile")
	var stopProfile func()
	root.PersistentPreRunE = func(cmd *cobra.Command, args []string) error {
		if cpuProfile == "" {
			return nil
		}
		// (a user's file is never replaced: remove an old profile first)
		f, err := outfile.Create(cpuProfile, outfile.Options{Flag: "--cpuprofile"})
		if errors.Is(err, outfile.ErrExists) {
			return fmt.Errorf("--cpuprofile %s: file exists; rocetap does not replace a file: remove it or choose another name", cpuProfile)
		}
		if err != nil {
			return err
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			f.Abort()
			return fmt.Errorf("--cpuprofile: %w", err)
		}
		stopProfile = func() {
			pprof.StopCPUProfile()
			if err := f.Commit(); err != nil {
				fmt.Fprintln(ios.ErrOut, "rocetap:", err)
			}
		}
		return nil
	}
	stop := func() {
		if stopProfile != nil {
			stopProfile()
			stopProfile = nil
		}
	}
	root.PersistentPostRun = func(cmd *cobra.Command, args []string) { stop() }
	// Every command's help ends with the exit statuses.
	root.SetUsageTemplate(root.UsageTemplate() + "\n" + exitTable + "\n")
	root.SetIn(ios.In)
	root.SetOut(ios.Out)
	root.SetErr(ios.ErrOut)
	root.AddCommand(NewCmdDecode(ios, nil), NewCmdFields(ios), NewCmdFilter(ios),
		NewCmdSessions(ios), NewCmdStats(ios), NewCmdExpert(ios))
	root.AddCommand(NewCmdEdit(ios))
	root.AddCommand(NewCmdPath(ios))
	root.AddCommand(NewCmdReplay(ios))
	root.AddCommand(NewCmdMPT(ios))
	root.AddCommand(NewCmdCapture(ios))
	root.AddCommand(NewCmdTUI(ios))
	root.AddCommand(newCmdMan(ios))
	root.AddCommand(newHelpTopics()...)
	registerCompletions(root)
	return root, stop
}

// Main runs rocetap with args and returns the exit status (exitTable).
func Main(args []string, ios IO) int {
	out := &outWatch{w: ios.Out}
	ios.Out = out
	root, stopProfile := newRootCmd(ios)
	defer stopProfile()
	root.SetArgs(args)
	err := root.Execute()
	var oe *outputError
	if out.err != nil && !errors.As(err, &oe) {
		// a write error the command did not return, alone or beside
		// another (a capture damaged part-way, a divergence)
		err = errors.Join(err, out.err)
	}
	if err != nil {
		fmt.Fprintln(ios.ErrOut, "rocetap:", sanitizeLines(message(err)))
		return exitStatus(err)
	}
	return ExitOK
}

// sanitizeLines escapes what an error or a note may carry from outside
// rocetap (file names, an MPT file's keys and strings, the rdma tool's
// comm) line by line, keeping the lines: a filter error's caret line
// stays under the filter.
func sanitizeLines(s string) string {
	if !strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 && r != '\n' || r >= 0x7f }) {
		return s
	}
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = decode.Sanitize(l)
	}
	return strings.Join(lines, "\n")
}
