package cli

import (
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"
)

// newCmdMan builds the hidden `rocetap man -o DIR`: a man page per
// command (rocetap.1, rocetap-decode.1, …) from the commands' own help, so
// the pages never disagree with --help. make man runs it; make install
// installs the pages.
func newCmdMan(ios IO) *cobra.Command {
	var dir string
	cmd := &cobra.Command{
		Use:    "man -o DIR",
		Short:  "Write the man pages (section 1) into DIR",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if dir == "" {
				return fmt.Errorf("no directory given: use -o DIR")
			}
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return fmt.Errorf("man pages: %w", err)
			}
			root := cmd.Root()
			root.DisableAutoGenTag = true
			// The pages end with the exit statuses, as --help does.
			var withTable func(c *cobra.Command)
			withTable = func(c *cobra.Command) {
				if c.Runnable() || c.HasSubCommands() {
					c.Long = strings.TrimRight(nonEmptyLong(c), "\n") + "\n\n" + exitTable
				}
				for _, sub := range c.Commands() {
					withTable(sub)
				}
			}
			withTable(root)
			hdr := &doc.GenManHeader{Title: "ROCETAP", Section: "1", Source: "rocetap " + version(), Manual: "rocetap manual"}
			if err := doc.GenManTree(root, hdr, dir); err != nil {
				return fmt.Errorf("man pages in %s: %w", dir, err)
			}
			fmt.Fprintf(ios.ErrOut, "man pages written to %s\n", dir)
			return nil
		},
	}
	cmd.Flags().StringVarP(&dir, "output-dir", "o", "", "directory to write the pages into")
	return cmd
}

// nonEmptyLong is c's long description, or its short one.
func nonEmptyLong(c *cobra.Command) string {
	if c.Long != "" {
		return c.Long
	}
	return c.Short
}
