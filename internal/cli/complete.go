package cli

import (
	"strings"

	"github.com/rocetap/rocetap/capture"
	"github.com/rocetap/rocetap/decode"
	"github.com/rocetap/rocetap/hca"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// registerCompletions gives every command's flags shell completion
// (`rocetap completion bash|zsh|fish|powershell`), by flag name, so that
// one place serves every command that has the flag: field names after -e
// and inside -Y, -T's values, interface names after -i, profiles after
// --profile, capture files after -r and JSON files after --mpt.
func registerCompletions(root *cobra.Command) {
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		c.Flags().VisitAll(func(f *pflag.Flag) {
			if fn := completionFor(c, f); fn != nil {
				_ = c.RegisterFlagCompletionFunc(f.Name, fn)
			}
		})
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}

type completeFunc = func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective)

func completionFor(c *cobra.Command, f *pflag.Flag) completeFunc {
	switch f.Name {
	case "field":
		return func(_ *cobra.Command, _ []string, word string) ([]string, cobra.ShellCompDirective) {
			return fieldNames("", word), cobra.ShellCompDirectiveNoFileComp
		}
	case "display-filter":
		return func(_ *cobra.Command, _ []string, expr string) ([]string, cobra.ShellCompDirective) {
			// Complete the field name being typed at the end of the
			// expression: "infiniband.bth.psn > 3 and infiniband.re".
			i := strings.LastIndexFunc(expr, func(r rune) bool {
				return !(r == '.' || r == '_' || r == '-' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z')
			})
			return fieldNames(expr[:i+1], expr[i+1:]), cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
		}
	case "output":
		// The values the usage lists: "output format: text, fields or json".
		_, list, ok := strings.Cut(f.Usage, ": ")
		if !ok {
			return nil
		}
		vals := strings.FieldsFunc(strings.ReplaceAll(list, " or ", ","), func(r rune) bool { return r == ',' || r == ' ' })
		return cobra.FixedCompletions(vals, cobra.ShellCompDirectiveNoFileComp)
	case "profile":
		return cobra.FixedCompletions(hca.Profiles(), cobra.ShellCompDirectiveNoFileComp)
	case "interface":
		return func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
			ifs, _ := capture.ListInterfaces()
			var names []string
			for _, i := range ifs {
				names = append(names, i.Name+"\t"+i.Description)
			}
			return names, cobra.ShellCompDirectiveNoFileComp
		}
	case "read-file":
		return func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
			return []string{"pcap", "pcapng", "erf", "cap"}, cobra.ShellCompDirectiveFilterFileExt
		}
	case "mpt":
		return func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
			return []string{"json"}, cobra.ShellCompDirectiveFilterFileExt
		}
	}
	return nil
}

// fieldNames returns prefix+name for every field and protocol whose name
// starts with word, with its description for shells that show one.
func fieldNames(prefix, word string) []string {
	var out []string
	for _, f := range decode.Fields() {
		if strings.HasPrefix(f.Abbrev, word) {
			out = append(out, prefix+f.Abbrev+"\t"+f.Name)
		}
	}
	return out
}
