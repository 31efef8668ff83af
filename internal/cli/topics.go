package cli

import (
	"strings"

	"github.com/rocetap/rocetap/docs"
	"github.com/spf13/cobra"
)

// helpTopics are the reference documents an installed binary carries:
// `rocetap help mpt-format` prints docs/mpt-format.md. Help and errors
// point to these, never to files of the source tree a user may not have.
var helpTopics = []struct{ name, file, short string }{
	{"mpt-format", "mpt-format.md", "The MPT file: what the modeled responder had registered (--mpt)"},
	{"json", "json.md", "The JSON outputs of decode, sessions, stats, expert and replay"},
	{"model", "model.md", "The reference HCA model: its checks, their order and outcomes"},
}

func newHelpTopics() []*cobra.Command {
	var cmds []*cobra.Command
	for _, t := range helpTopics {
		body, err := docs.FS.ReadFile(t.file)
		if err != nil {
			panic("cli: help topic " + t.file + " is not embedded") // docs/docs.go embeds *.md
		}
		// A topic is a command with no Run: `rocetap help NAME` prints its Long.
		cmds = append(cmds, &cobra.Command{Use: t.name, Short: t.short, Long: strings.TrimSpace(string(body))})
	}
	return cmds
}
