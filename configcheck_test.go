package mira

import "testing"

// TestParseConfigEmpty: an empty configuration file, or one of comments
// only (the way a user starts one), configures nothing and is no error.
func TestParseConfigEmpty(t *testing.T) {
	for _, in := range []string{"", "\n", "# nothing yet\n", "---\n"} {
		cfg, err := ParseConfig([]byte(in))
		if err != nil {
			t.Errorf("ParseConfig(%q) = %v", in, err)
			continue
		}
		if cfg.Recall.K != 0 || cfg.Home != "" {
			t.Errorf("ParseConfig(%q) configured %+v", in, cfg)
		}
	}
}
