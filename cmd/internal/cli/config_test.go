package cli

import (
	"os"
	"path/filepath"
	"testing"
)

// The config file's values become the commands' defaults.
func TestConfigDefaults(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "config.yaml")
	yaml := `
recall: {k: 7}
context:
  mode: heavy
  log: true
  budget: {light: 3000}
summarize: {max_entries: 200}
agent:
  conversation: work
  max_steps: 9
  allow: [edit_file, bash]
prices:
  deepseek-chat: {input: 0.28, cached_input: 0.028, output: 0.42}
`
	if err := os.WriteFile(path, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	getenv := func(k string) string {
		if k == "MIRA_CONFIG" {
			return path
		}
		return ""
	}
	cfg, err := loadConfig(getenv)
	if err != nil {
		t.Fatal(err)
	}
	vars := configVars(cfg, getenv)
	for k, want := range map[string]string{
		"recall_k": "7", "context_mode": "heavy", "context_log": "true", "max_entries": "200",
		"agent_conversation": "work", "agent_max_steps": "9", "agent_allow": "edit_file,bash",
		"agent_buffer_tokens": "24000", "agent_effort": "auto", "encoding": "o200k_base",
	} {
		if vars[k] != want {
			t.Errorf("vars[%q] = %q, want %q", k, vars[k], want)
		}
	}
	if cfg.Context.Budget.Light != 3000 {
		t.Errorf("context.budget.light = %d", cfg.Context.Budget.Light)
	}
}
