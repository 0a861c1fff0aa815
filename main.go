// Command debussy runs multi-phase coding plans through the Claude Code CLI
// without losing work. See README.md.
package main

import (
	"os"

	"github.com/debussy-dev/debussy/commands"
)

func main() {
	os.Exit(commands.Main(os.Args))
}
