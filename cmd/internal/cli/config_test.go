package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/miramem/mira"
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

// mira config lists every key the configuration file may set, and only
// those: a key added to mira.Config and not to the listing fails here.
func TestConfigListsEveryKey(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "config.yaml")
	yaml := "agent:\n  plan_log_mib: 4\nprices:\n  deepseek-chat: {input: 0.28, cached_input: 0.028, output: 0.42}\n"
	if err := os.WriteFile(path, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, env := range []map[string]string{{}, {"MIRA_CONFIG": path}} {
		var out, errb bytes.Buffer
		o := &IO{Out: &out, Err: &errb, Getenv: func(k string) string { return env[k] }}
		if code := Mira([]string{"config", "--home", filepath.Join(dir, "home")}, o); code != ExitOK {
			t.Fatalf("mira config: exit %d\n%s", code, errb.String())
		}
		listed := map[string]string{}
		for _, line := range strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n") {
			if strings.HasPrefix(line, "#") {
				continue
			}
			key, rest, _ := strings.Cut(line, " ")
			listed[key] = strings.TrimSpace(rest)
		}
		keys := mira.ConfigKeys()
		for _, k := range keys {
			if _, ok := listed[k]; !ok {
				t.Errorf("MIRA_CONFIG=%q: mira config does not list %s", env["MIRA_CONFIG"], k)
			}
		}
		for k := range listed {
			if !slices.Contains(keys, k) && !strings.HasPrefix(k, "prices.") {
				t.Errorf("mira config lists %s, which the file cannot set", k)
			}
		}
		if env["MIRA_CONFIG"] != "" {
			for k, want := range map[string]string{
				"agent.plan_log_mib":   "4",
				"agent.plan_log":       "true",
				"agent.extract":        "true",
				"prices":               "deepseek-chat",
				"prices.deepseek-chat": "input 0.28, cached_input 0.028, output 0.42",
			} {
				if got := listed[k]; !strings.HasPrefix(got, want+" ") {
					t.Errorf("mira config: %s %q, want it to start with %q", k, got, want)
				}
			}
		}
	}
}

// A number the file sets to 0 keeps the built-in default: mira config
// shows the default in effect, not the 0.
func TestConfigListsDefaultForZero(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "config.yaml")
	yaml := "recall:\n  k: 0\ncontext:\n  budget: {light: 0}\nagent:\n  max_steps: 0\n  plan_log_mib: 0\n"
	if err := os.WriteFile(path, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	o := &IO{Out: &out, Err: &errb, Getenv: func(k string) string { return map[string]string{"MIRA_CONFIG": path}[k] }}
	if code := Mira([]string{"config", "--home", filepath.Join(dir, "home")}, o); code != ExitOK {
		t.Fatalf("mira config: exit %d\n%s", code, errb.String())
	}
	for key, want := range map[string]string{
		"recall.k":             "10",
		"context.budget.light": "4000",
		"agent.max_steps":      "25",
		"agent.plan_log_mib":   "16",
	} {
		var got []string
		for _, line := range strings.Split(out.String(), "\n") {
			if f := strings.Fields(line); len(f) > 1 && f[0] == key {
				got = f
			}
		}
		if len(got) < 3 || got[1] != want || !strings.Contains(strings.Join(got[2:], " "), "config.yaml:") {
			t.Errorf("mira config: %s %q, want %s from the file (0 keeps the default)", key, got, want)
		}
	}
}
