package cli

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// TestREADMEFlagsExist: every flag the README's command table shows for
// a command is one its --help lists (issue 16: the README and --help
// agree), and every command the table names exists.
func TestREADMEFlagsExist(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	root := NewRootCmd(IO{})
	row := regexp.MustCompile("^\\| `rocetap ([a-z]+(?: (?:learn|import|check|bash))?)([^|]*)` \\|(.*)$")
	flag := regexp.MustCompile("(?:^|[\\s`(])(--?[a-zA-Z][-a-zA-Z]*)")
	n := 0
	for _, line := range strings.Split(string(b), "\n") {
		m := row.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		names := strings.Fields(m[1])
		if strings.Contains(names[0], "/") {
			continue
		}
		cmd, _, err := root.Find(names)
		if err != nil || cmd == root {
			t.Errorf("README names `rocetap %s`, which is no command", m[1])
			continue
		}
		n++
		for _, f := range flag.FindAllStringSubmatch(m[2], -1) { // the command column (descriptions quote other tools)
			if !hasFlag(cmd, f[1]) && !strings.HasPrefix(f[1], "--go") {
				t.Errorf("README: `rocetap %s` with %s, which its --help does not list", m[1], f[1])
			}
		}
	}
	if n < 15 {
		t.Fatalf("found %d command rows in the README's table", n)
	}
}

func hasFlag(cmd *cobra.Command, f string) bool {
	fs := cmd.Flags()
	if name, ok := strings.CutPrefix(f, "--"); ok {
		return fs.Lookup(name) != nil || cmd.InheritedFlags().Lookup(name) != nil || name == "help" || name == "version"
	}
	return len(f) == 2 && (fs.ShorthandLookup(f[1:]) != nil || f == "-h")
}
