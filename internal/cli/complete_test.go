package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// TestCompletion: the shell completion cobra serves (`rocetap __complete
// ARGS`, what the scripts of `rocetap completion SHELL` call) completes
// fields after -e and inside -Y, -T's values, profiles and interfaces.
func TestCompletion(t *testing.T) {
	tests := []struct {
		args []string
		want []string
		not  []string
	}{
		{[]string{"decode", "-e", "infiniband.bth.ps"}, []string{"infiniband.bth.psn\t"}, []string{"infiniband.bth.opcode"}},
		{[]string{"decode", "-T", "fields", "-e", "rocetap.mpt.ver"}, []string{"rocetap.mpt.verdict\t"}, nil},
		{[]string{"decode", "-Y", "frame.number > 3 and infiniband.reth.r"}, []string{"frame.number > 3 and infiniband.reth.r_key\t"}, nil},
		{[]string{"stats", "-Y", "infiniband.aeth.syn"}, []string{"infiniband.aeth.syndrome\t"}, nil},
		{[]string{"decode", "-T", ""}, []string{"text\n", "fields\n", "json\n"}, nil},
		{[]string{"sessions", "-T", ""}, []string{"text\n", "json\n"}, []string{"fields"}},
		{[]string{"replay", "--profile", ""}, []string{"ibta\n", "rxe\n"}, nil},
		{[]string{"capture", "-i", ""}, []string{"lo\t"}, nil},
	}
	for _, tt := range tests {
		out, errOut, code := run(t, nil, append([]string{cobra.ShellCompRequestCmd}, tt.args...)...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", tt.args, code, errOut)
		}
		for _, w := range tt.want {
			if !strings.Contains(out, w) {
				t.Errorf("%v: completions lack %q:\n%s", tt.args, w, out)
			}
		}
		for _, w := range tt.not {
			if strings.Contains(out, w) {
				t.Errorf("%v: completions hold %q:\n%s", tt.args, w, out)
			}
		}
	}
	if out, _, code := run(t, nil, "completion", "bash"); code != 0 || !strings.Contains(out, "__start_rocetap") {
		t.Errorf("completion bash: exit %d", code)
	}
}

// TestManPages: `rocetap man -o DIR` (make man) writes a page per command
// from its help, the exit statuses included.
func TestManPages(t *testing.T) {
	dir := t.TempDir()
	if _, errOut, code := run(t, nil, "man", "-o", dir); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, page := range []string{"rocetap.1", "rocetap-decode.1", "rocetap-replay.1", "rocetap-mpt-check.1", "rocetap-capture.1", "rocetap-tui.1"} {
		b, err := os.ReadFile(filepath.Join(dir, page))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), "Exit status") || !strings.Contains(string(b), "replay: the responder did not answer") {
			t.Errorf("%s has no exit-status table", page)
		}
	}
}

// TestHelpNeedsNoSourceTree: an installed binary's help (every command's
// long text, examples and flags) and its help topics never point to
// testdata/ or docs/ files a user does not have; `rocetap help
// mpt-format` prints the document itself.
func TestHelpNeedsNoSourceTree(t *testing.T) {
	root := NewRootCmd(IO{})
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		text := c.Short + c.Long + c.Example + c.Flags().FlagUsages()
		if c.Runnable() || c.HasSubCommands() {
			for _, bad := range []string{"testdata/", "docs/"} {
				if strings.Contains(text, bad) {
					t.Errorf("%s: help mentions %s", c.CommandPath(), bad)
				}
			}
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	out, _, code := run(t, nil, "help", "mpt-format")
	if code != 0 || !strings.HasPrefix(out, "# The MPT file") || !strings.Contains(out, "responder.address") {
		t.Errorf("help mpt-format: exit %d:\n%.300s", code, out)
	}
}
