package cli

import (
	"errors"
	"fmt"

	"github.com/rocetap/rocetap/decode/filter"
	"github.com/spf13/cobra"
)

// NewCmdFilter builds `rocetap filter check`.
func NewCmdFilter(ios IO) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "filter",
		Short: "Work with display filters (the language of -Y)",
	}
	cmd.AddCommand(&cobra.Command{
		Use:   "check EXPR",
		Short: "Validate a display filter and explain how rocetap reads it",
		Long: `Compile EXPR as rocetap decode -Y would, without reading a capture.
A valid filter prints its canonical, fully parenthesized form and the fields
it uses with their types. An invalid one prints what is wrong, with a caret
under the bad token and the closest field names, and exits 1.`,
		Example: `  rocetap filter check 'infiniband.bth.opcode in {6..11} and ip.addr == 10.77.0.0/16'
  rocetap filter check 'infiniband.reth.rkey == 0x1234'`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return errors.New("filter check takes one expression; quote it: rocetap filter check 'infiniband.bth.psn > 100'")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			f, err := filter.Compile(args[0])
			if err != nil {
				return err
			}
			fmt.Fprint(ios.Out, f.Explain())
			return nil
		},
	})
	return cmd
}
