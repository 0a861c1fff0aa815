package config

import (
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestNotify(t *testing.T) {
	tests := []struct {
		name    string
		file    string
		env     []string
		want    []Notify
		wantErr string // "" for none
	}{
		{name: "every kind", file: `notify:
  - kind: webhook
    url: https://example.com/hook
  - kind: ntfy
    url: http://127.0.0.1:8080/topic
    events: [blocked, failed]
  - kind: slack
    url: https://hooks.slack.com/services/x
    timeout: 3s
  - kind: command
    command: [notify-send, debussy]
`, want: []Notify{
			{Kind: "webhook", URL: "https://example.com/hook"},
			{Kind: "ntfy", URL: "http://127.0.0.1:8080/topic", Events: []string{"blocked", "failed"}},
			{Kind: "slack", URL: "https://hooks.slack.com/services/x", Timeout: Duration(3 * time.Second)},
			{Kind: "command", Command: []string{"notify-send", "debussy"}},
		}},
		{name: "env flow syntax", env: []string{`DEBUSSY_NOTIFY=[{kind: webhook, url: "http://localhost:9/x"}]`},
			want: []Notify{{Kind: "webhook", URL: "http://localhost:9/x"}}},
		{name: "unknown field", file: "notify:\n  - kind: webhook\n    uri: https://x\n", wantErr: ".debussy.yaml:3"},
		{name: "bad kind", file: "notify:\n  - kind: email\n", wantErr: `entry 1: kind "email" is not webhook, ntfy, slack or command`},
		{name: "no url", file: "notify:\n  - kind: ntfy\n", wantErr: "kind ntfy needs a url"},
		{name: "not http", file: "notify:\n  - kind: webhook\n    url: ftp://x/y\n", wantErr: "is not an http(s) URL"},
		{name: "command without program", file: "notify:\n  - kind: command\n", wantErr: "needs command"},
		{name: "bad event", file: "notify:\n  - kind: webhook\n    url: https://x\n    events: [done]\n", wantErr: `event "done" is not one of`},
		{name: "timeout too long", file: "notify:\n  - kind: webhook\n    url: https://x\n    timeout: 1m\n", wantErr: "not between 0 and 10s"},
		{name: "not a list", file: "notify: https://x\n", wantErr: "want a list"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			if tt.file != "" {
				writeFile(t, filepath.Join(root, FileName), tt.file)
			}
			cfg, _, err := Load(root, "", tt.env)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(cfg.Notify) != len(tt.want) {
				t.Fatalf("notify = %+v, want %+v", cfg.Notify, tt.want)
			}
			for i := range tt.want {
				g, w := cfg.Notify[i], tt.want[i]
				if g.Kind != w.Kind || g.URL != w.URL || strings.Join(g.Command, " ") != strings.Join(w.Command, " ") ||
					strings.Join(g.Events, ",") != strings.Join(w.Events, ",") || g.Timeout != w.Timeout {
					t.Errorf("notify[%d] = %+v, want %+v", i, g, w)
				}
			}
		})
	}
}
