package commands

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/urfave/cli/v2"

	"github.com/debussy-dev/debussy/config"
	"github.com/debussy-dev/debussy/state"
)

func (e *Env) initCommand() *cli.Command {
	return &cli.Command{
		Name:  "init",
		Usage: "write a short .debussy.yaml (every key commented out at its default) and add .debussy/ to .gitignore",
		Description: `Writes .debussy.yaml at the repository root with the keys people change, each
explained, the rest commented out at their defaults; 'debussy config example' prints
every key with its meaning. Adds .debussy/ (debussy's state and logs) to .gitignore.
Commit both files, so that CI and every clone run with the same settings:

  git add .debussy.yaml .gitignore && git commit -m "debussy config"`,
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "force", Usage: "overwrite an existing .debussy.yaml"},
		},
		Action: func(c *cli.Context) error {
			return e.initRepo(c.Bool("force"))
		},
	}
}

func (e *Env) initRepo(force bool) error {
	_, root, err := e.findRepo()
	if err != nil {
		return err
	}
	cfgPath := filepath.Join(root, ".debussy.yaml")
	if _, err := os.Stat(cfgPath); err == nil && !force {
		return fmt.Errorf("%w: %s exists; use --force to overwrite it", ErrUsage, cfgPath)
	}
	if err := os.WriteFile(cfgPath, config.InitFile(), 0o644); err != nil {
		return fmt.Errorf("write config: %w", err)
	}
	fmt.Fprintf(e.Stdout, "wrote %s\n", cfgPath)
	ignore := filepath.Join(root, ".gitignore")
	old, err := os.ReadFile(ignore)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("read .gitignore: %w", err)
	}
	added, err := ignoreState(ignore, old)
	if err != nil {
		return err
	}
	if added {
		// debussy run accepts this change to a tracked .gitignore (and its
		// first commit takes it in), so the next step of the quick start works.
		fmt.Fprintf(e.Stdout, "added .debussy/ to %s (debussy run accepts this uncommitted change)\n", ignore)
	}
	// The next steps: where every key is explained, and that the two files
	// belong in the repository (a CI job or a colleague's clone reads them).
	fmt.Fprintf(e.Stdout, "every key with its meaning: debussy config example\n"+
		"commit both files so CI and every clone use them: git add .debussy.yaml .gitignore && git commit -m \"debussy config\"\n")
	return nil
}

// ignoreState adds .debussy/ to the .gitignore at path (old is its content)
// unless a line ignores it already, and says whether it did.
func ignoreState(path string, old []byte) (bool, error) {
	for _, line := range bytes.Split(old, []byte("\n")) {
		if state.IgnoresState(line) {
			return false, nil
		}
	}
	if len(old) > 0 && !bytes.HasSuffix(old, []byte("\n")) {
		old = append(old, '\n')
	}
	old = append(old, state.IgnoreLines...)
	if err := os.WriteFile(path, old, 0o644); err != nil {
		return false, fmt.Errorf("write .gitignore: %w", err)
	}
	return true, nil
}
