package commands

import (
	"fmt"

	"github.com/urfave/cli/v2"
)

// Completion scripts call debussy itself with --generate-bash-completion
// (urfave/cli's word, answered by complete.go), so they stay right as
// commands, flags and their values change.
const bashCompletion = `# debussy completion for bash: eval "$(debussy completion bash)"
_debussy_complete() {
  local cur opts
  COMPREPLY=()
  cur="${COMP_WORDS[COMP_CWORD]}"
  # The word under the cursor goes last, even empty: debussy then knows
  # whether the word before it is a flag whose value is asked for.
  opts=$("${COMP_WORDS[@]:0:$COMP_CWORD}" "$cur" --generate-bash-completion 2>/dev/null)
  COMPREPLY=($(compgen -W "$opts" -- "$cur"))
  return 0
}
complete -o bashdefault -o default -F _debussy_complete debussy
`

const zshCompletion = `#compdef debussy
# debussy completion for zsh: eval "$(debussy completion zsh)", or save as _debussy on $fpath
_debussy() {
  local -a opts
  local cur=${words[-1]}
  opts=("${(@f)$(${words[@]:0:#words[@]-1} "$cur" --generate-bash-completion 2>/dev/null)}")
  if [[ "${opts[1]}" != "" ]]; then
    _describe 'values' opts
  else
    _files
  fi
}
if [[ "$funcstack[1]" == "_debussy" ]]; then
  _debussy "$@"
else
  compdef _debussy debussy
fi
`

func (e *Env) completionCommand() *cli.Command {
	return &cli.Command{
		Name:      "completion",
		Usage:     "print a shell completion script (bash or zsh)",
		ArgsUsage: "bash|zsh",
		Description: `Load it in the current shell, or add the line to ~/.bashrc or ~/.zshrc:

  eval "$(debussy completion bash)"
  eval "$(debussy completion zsh)"`,
		Action: func(c *cli.Context) error {
			shell, err := oneArg(c, "shell (bash or zsh)")
			if err != nil {
				return err
			}
			switch shell {
			case "bash":
				fmt.Fprint(e.Stdout, bashCompletion)
			case "zsh":
				fmt.Fprint(e.Stdout, zshCompletion)
			default:
				return usageErr(c, "no completion for %q: debussy completion bash, or debussy completion zsh", shell)
			}
			return nil
		},
	}
}
