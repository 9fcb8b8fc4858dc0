package mira

import (
	"slices"
	"testing"
)

// Every key ConfigKeys lists names a value of Config, and the file's
// sections are all there.
func TestConfigKeys(t *testing.T) {
	keys := ConfigKeys()
	c := &Config{Lines: map[string]int{}}
	for _, k := range keys {
		c.Lines[k] = 1
	}
	for _, k := range keys {
		if _, ok := ConfigValue(c, k); !ok {
			t.Errorf("ConfigValue(%q) finds no value", k)
		}
	}
	for _, k := range []string{"home", "recall.k", "context.budget.light", "context.code.map.heavy", "agent.extract", "agent.plan_log", "agent.plan_log_mib", "prices"} {
		if !slices.Contains(keys, k) {
			t.Errorf("ConfigKeys() lacks %s: %q", k, keys)
		}
	}
	if slices.Contains(keys, "path") || slices.Contains(keys, "lines") || slices.Contains(keys, "recall") {
		t.Errorf("ConfigKeys() lists what the file cannot set: %q", keys)
	}
}
