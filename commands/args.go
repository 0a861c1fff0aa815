package commands

import (
	"strings"

	"github.com/urfave/cli/v2"
)

// reorderArgs moves a subcommand's flags in front of its positional
// arguments. urfave/cli v2 stops parsing flags at the first positional
// argument, so `debussy run PLAN.md --max-restarts 1` would silently treat
// the flag as an argument. A "--" ends flag parsing as usual.
func reorderArgs(app *cli.App, args []string) []string {
	if len(args) < 2 || args[len(args)-1] == "--generate-bash-completion" {
		// urfave/cli completes only when its flag comes last; moving the
		// positional arguments behind it would run the command instead.
		return args
	}
	// Find the subcommand: the first argument that names one. Global flags
	// before it are only booleans (--help, --version).
	idx := -1
	var cmd *cli.Command
	for i := 1; i < len(args); i++ {
		if strings.HasPrefix(args[i], "-") {
			continue
		}
		if c := findCommand(app, args[i]); c != nil {
			idx, cmd = i, c
		}
		break
	}
	if cmd == nil {
		return args
	}
	takesValue := map[string]bool{}
	for _, f := range cmd.Flags {
		_, isBool := f.(*cli.BoolFlag)
		if g, ok := f.(*cli.GenericFlag); ok {
			// A switch that may take "=value" (tune's --from-claude).
			b, ok := g.Value.(interface{ IsBoolFlag() bool })
			isBool = ok && b.IsBoolFlag()
		}
		for _, n := range f.Names() {
			takesValue[n] = !isBool
		}
	}
	var flags, positional []string
	rest := args[idx+1:]
	for i := 0; i < len(rest); i++ {
		a := rest[i]
		if a == "--" {
			positional = append(positional, rest[i+1:]...)
			break
		}
		if !strings.HasPrefix(a, "-") || a == "-" {
			positional = append(positional, a)
			continue
		}
		flags = append(flags, a)
		name := strings.TrimLeft(a, "-")
		if strings.Contains(name, "=") {
			continue
		}
		if takesValue[name] && i+1 < len(rest) {
			i++
			flags = append(flags, rest[i])
		}
	}
	out := append([]string{}, args[:idx+1]...)
	out = append(out, flags...)
	if len(positional) > 0 {
		out = append(out, "--")
		out = append(out, positional...)
	}
	return out
}

func findCommand(app *cli.App, name string) *cli.Command {
	for _, c := range app.Commands {
		if c.HasName(name) {
			return c
		}
	}
	return nil
}
