package orchestrator

import (
	"reflect"
	"slices"
	"testing"

	"github.com/debussy-dev/debussy/runner"
)

// A bounded session gets one --settings: the user's from extra_args,
// debussy's own over them, and the CLI's sandbox block whatever either
// says (claude takes one --settings: 2.1.112 ignored a second one, and the
// sandbox with it).
func TestBoxOneSettings(t *testing.T) {
	box := map[string]any{"enabled": true}
	p := &phaseRun{claudeBox: &boxedClaude{
		wrapper: []string{"/usr/bin/bwrap", "--"}, env: map[string]string{"TMPDIR": "/tmp/x"},
		extraArgs: []string{"--max-turns", "9"},
		settings:  map[string]any{"model": "mine", "idleCompaction": true, "sandbox": box},
	}}
	spec := runner.Spec{ExtraArgs: []string{"--settings", `{"sandbox":{"enabled":false}}`, "--max-turns", "9"},
		Settings: map[string]any{"idleCompaction": false, "sandbox": map[string]any{"enabled": false}}}
	p.box(&spec)
	if slices.Contains(spec.ExtraArgs, "--settings") || !reflect.DeepEqual(spec.ExtraArgs, []string{"--max-turns", "9"}) {
		t.Errorf("ExtraArgs = %q, want the user's --settings taken out", spec.ExtraArgs)
	}
	want := map[string]any{"model": "mine", "idleCompaction": false, "sandbox": box}
	if !reflect.DeepEqual(spec.Settings, want) {
		t.Errorf("Settings = %v, want %v", spec.Settings, want)
	}
	if spec.SetEnv["TMPDIR"] != "/tmp/x" || spec.Wrapper[0] != "/usr/bin/bwrap" {
		t.Errorf("spec = %+v", spec)
	}
}
