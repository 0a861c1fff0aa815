package commands

import (
	"github.com/urfave/cli/v2"

	"github.com/debussy-dev/debussy/config"
)

// configCommand is `debussy config`: what the installed binary knows of
// its configuration, so nobody needs debussy's repository to read it.
func (e *Env) configCommand() *cli.Command {
	return &cli.Command{
		Name:  "config",
		Usage: "print every configuration key with its meaning (debussy config example)",
		Subcommands: []*cli.Command{{
			Name:  "example",
			Usage: "print a .debussy.yaml that sets every key to its default, each with what it means and allows",
			Description: `Prints the documented configuration: every key debussy reads, its default, what it
means and the values it allows. It loads to the defaults, so it is a valid .debussy.yaml:

  debussy config example > .debussy.yaml      # or copy the keys you change into yours

Precedence: defaults < .debussy.yaml < DEBUSSY_<KEY> environment variables < flags.`,
			Action: func(c *cli.Context) error {
				if c.NArg() > 0 {
					return usageErr(c, "config example takes no arguments")
				}
				_, err := e.Stdout.Write(config.Example())
				return err
			},
		}},
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return usageErr(c, "no config subcommand %q: debussy config example", c.Args().First())
			}
			return cli.ShowSubcommandHelp(c)
		},
	}
}
