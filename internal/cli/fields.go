package cli

import (
	"bufio"
	"fmt"
	"strings"

	"github.com/rocetap/rocetap/decode"
	"github.com/spf13/cobra"
)

// NewCmdFields lists the field registry like tshark -G fields.
func NewCmdFields(ios IO) *cobra.Command {
	return &cobra.Command{
		Use:   "fields [PREFIX]",
		Short: "List every field rocetap knows (like tshark -G fields)",
		Long: `List every field: "F", name, abbreviation, type, protocol, base, bitmask and
description, tab-separated, in the column order of tshark -G fields. With
PREFIX, only fields whose abbreviation starts with it.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			w := bufio.NewWriter(ios.Out)
			prefix := ""
			if len(args) == 1 {
				prefix = args[0]
			}
			n := 0
			for _, f := range decode.Fields() {
				if !strings.HasPrefix(f.Abbrev, prefix) {
					continue
				}
				root := f
				for root.Parent != nil {
					root = root.Parent
				}
				if root == f {
					fmt.Fprintf(w, "P\t%s\t%s\n", f.Name, f.Abbrev)
				} else {
					fmt.Fprintf(w, "F\t%s\t%s\t%s\t%s\t%s\t0x%x\t%s\n", f.Name, f.Abbrev, f.Type, root.Abbrev, f.Base, f.Bitmask, f.Blurb)
				}
				n++
			}
			if n == 0 {
				return fmt.Errorf("no field starts with %q; try `rocetap fields infiniband`", prefix)
			}
			return w.Flush() // (bufio keeps the first write error)
		},
	}
}
