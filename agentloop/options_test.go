package agentloop_test

import (
	"errors"
	"testing"

	. "github.com/miramem/mira/agentloop"
)

// CheckLimits refuses a zero or negative MaxSteps, BufferTokens or
// ContextBudget, naming Config's field; it takes the values as they are.
func TestCheckLimits(t *testing.T) {
	ok := Config{MaxSteps: 1, BufferTokens: 1, ContextBudget: 1}
	if err := ok.CheckLimits(); err != nil {
		t.Fatalf("CheckLimits(%+v) = %v, want nil", ok, err)
	}
	for option, set := range map[string]func(*Config, int){
		"max_steps":      func(c *Config, n int) { c.MaxSteps = n },
		"buffer_tokens":  func(c *Config, n int) { c.BufferTokens = n },
		"context_budget": func(c *Config, n int) { c.ContextBudget = n },
	} {
		for _, n := range []int{0, -1} {
			cfg := ok
			set(&cfg, n)
			err := cfg.CheckLimits()
			var oe *OptionError
			if !errors.As(err, &oe) || oe.Option != option || oe.Err.Error() != "must be at least 1" {
				t.Errorf("CheckLimits with %s = %d: %v, want an *OptionError %s: must be at least 1", option, n, err, option)
			}
		}
	}
}

// New puts defaults in place of zero limits and refuses a negative one,
// naming Config's field.
func TestNewLimits(t *testing.T) {
	r := newRig(t, nil)
	cfg := r.cfg
	cfg.MaxSteps, cfg.BufferTokens, cfg.ContextBudget, cfg.RecallBudget = 0, 0, 0, 0
	a, err := New(cfg)
	if err != nil {
		t.Fatalf("New with zero limits: %v", err)
	}
	if got := a.Status().BufferLimit; got != DefaultBufferTokens {
		t.Errorf("New with zero limits: buffer limit %d, want %d", got, DefaultBufferTokens)
	}
	for option, set := range map[string]func(*Config){
		"max_steps":      func(c *Config) { c.MaxSteps = -1 },
		"buffer_tokens":  func(c *Config) { c.BufferTokens = -1 },
		"context_budget": func(c *Config) { c.ContextBudget = -1 },
		"recall_budget":  func(c *Config) { c.RecallBudget = -1 },
	} {
		cfg := r.cfg
		set(&cfg)
		_, err := New(cfg)
		var oe *OptionError
		if !errors.As(err, &oe) || oe.Option != option {
			t.Errorf("New with a negative %s: %v, want an *OptionError naming it", option, err)
		}
	}
}
