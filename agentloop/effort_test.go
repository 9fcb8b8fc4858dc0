package agentloop

import (
	"testing"
)

func TestClassifyEffort(t *testing.T) {
	tests := []struct {
		text, want string
	}{
		{"thanks!", EffortNone},
		{"ok", EffortNone},
		{"", EffortNone},
		{"read src/main.rs", EffortLow},
		{"where is the config loaded?", EffortLow},
		{"list the open tasks", EffortLow},
		{"what does this function do", EffortMedium},
		{"fix the failing test in the parser", EffortMedium},
		{"add a --verbose flag", EffortMedium},
		{"refactor auth system", EffortHigh},
		{"why is this deadlocking", EffortHigh},
		{"the tests are flaky on CI", EffortHigh},
		{"look at a.go, b.go and c/d.go together", EffortHigh},
		{"please take a look at the thing we talked about yesterday and tell me more", EffortMedium},
		{"hello there", EffortNone},
		{"the build", EffortLow},
	}
	for _, tt := range tests {
		if got := ClassifyEffort(tt.text); got != tt.want {
			t.Errorf("ClassifyEffort(%q) = %q, want %q", tt.text, got, tt.want)
		}
	}
}

func TestEffortValue(t *testing.T) {
	tests := []struct {
		model, level, want string
	}{
		{"gpt-5.1", EffortNone, "none"},
		{"gpt-5.2", EffortHigh, "high"},
		{"gpt-5-mini", EffortNone, "minimal"},
		{"openai/gpt-5", EffortNone, "minimal"},
		{"o3", EffortNone, "low"},
		{"o4-mini", EffortMedium, "medium"},
		{"gpt-oss:20b", EffortLow, "low"},
		{"deepseek-chat", EffortHigh, ""},
		{"qwen3:8b", EffortMedium, ""},
		{"gpt-5.1", "", ""},
	}
	for _, tt := range tests {
		if got := EffortValue(tt.model, tt.level); got != tt.want {
			t.Errorf("EffortValue(%q, %q) = %q, want %q", tt.model, tt.level, got, tt.want)
		}
	}
}

func TestParseEffort(t *testing.T) {
	for in, want := range map[string]string{"": "auto", "AUTO": "auto", "high": "high", " none ": "none"} {
		if got, err := ParseEffort(in); err != nil || got != want {
			t.Errorf("ParseEffort(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := ParseEffort("xhigh"); err == nil {
		t.Error("ParseEffort(xhigh) accepted an unknown level")
	}
}
