package mem

import (
	"strings"
	"testing"
)

// A name becomes a scope by one rule, for a project's name (the agent) and
// a user's (the proxy) alike, cut to the longest scope ValidScope takes.
func TestScopeName(t *testing.T) {
	long := strings.Repeat("a", 300)
	for _, tt := range []struct{ in, want string }{
		{"mira", "mira"},
		{"my project", "my-project"},
		{"  ann@example.com ", "ann-example.com"},
		{"a..b", "a.b"},
		{"ü-tool", "tool"},
		{"..", ""},
		{"", ""},
		{"deleted", ""},
		{long, long[:MaxScopeBytes]},
		{strings.Repeat("a", MaxScopeBytes-1) + "-b", strings.Repeat("a", MaxScopeBytes-1)},
	} {
		got := ScopeName(tt.in)
		if got != tt.want {
			t.Errorf("ScopeName(%.20q…) = %.20q…, want %.20q…", tt.in, got, tt.want)
		}
		if got != "" {
			if err := ValidScope(got); err != nil {
				t.Errorf("ScopeName(%.20q…) is not a scope: %v", tt.in, err)
			}
		}
	}
	if MaxScopeBytes > MaxFieldBytes {
		t.Errorf("a scope may be longer (%d) than a one-word field (%d)", MaxScopeBytes, MaxFieldBytes)
	}
}
