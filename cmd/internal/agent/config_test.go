package agent

import (
	"github.com/miramem/mira/cmd/internal/clitest"
	"os"
	"path/filepath"
	"testing"

	"github.com/miramem/mira/agentloop"
	"github.com/miramem/mira/cmd/internal/cli"
)

// The config file's prices are the model's unless flags give others.
func TestPrices(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.yaml")
	yaml := "prices:\n  deepseek-chat: {input: 0.28, cached_input: 0.028, output: 0.42}\n"
	if err := os.WriteFile(path, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	getenv := func(k string) string {
		if k == "MIRA_CONFIG" {
			return path
		}
		return ""
	}
	o := &cli.IO{Getenv: getenv}
	c := &Cmd{}
	if got, want := c.prices(o, "deepseek-chat"), (agentloop.Prices{Input: 0.28, CachedInput: 0.028, Output: 0.42}); got != want {
		t.Errorf("prices(deepseek-chat) = %+v, want %+v", got, want)
	}
	if got := c.prices(o, "other"); got != (agentloop.Prices{}) {
		t.Errorf("prices(other) = %+v, want none", got)
	}
	c.PriceInput = 1
	if got := c.prices(o, "deepseek-chat"); got.Input != 1 || got.Output != 0 {
		t.Errorf("flag prices = %+v, want the flags to win", got)
	}
}

func git(t *testing.T, dir string, args ...string) string { return clitest.Git(t, dir, args...) }
