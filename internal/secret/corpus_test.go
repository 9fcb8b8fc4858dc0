package secret

import (
	"slices"
	"testing"

	"github.com/miramem/mira/internal/secret/secrettest"
)

// TestCorpus measures the rules against the shared corpora: every secret
// refused by the rule meant for it, every ordinary note accepted.
func TestCorpus(t *testing.T) {
	secrets, ordinary := secrettest.Secrets(), secrettest.Ordinary()
	refused := 0
	for _, s := range secrets {
		fs := Scan(s.Text)
		if len(fs) == 0 {
			t.Errorf("%s: not refused: %q", s.Name, s.Text)
			continue
		}
		refused++
		if !slices.ContainsFunc(fs, func(f Finding) bool { return f.Rule == s.Rule }) {
			t.Errorf("%s: found %v, want a %s finding", s.Name, fs, s.Rule)
		}
	}
	falsePositives := 0
	for _, text := range ordinary {
		if fs := Scan(text); len(fs) > 0 {
			falsePositives++
			t.Errorf("ordinary note refused: %q: %v", text, fs)
		}
	}
	t.Logf("secrets refused: %d of %d; ordinary notes accepted: %d of %d (%d false positives)",
		refused, len(secrets), len(ordinary)-falsePositives, len(ordinary), falsePositives)
	if len(secrets) < 40 || len(ordinary) < 40 {
		t.Errorf("corpora too small: %d secrets, %d ordinary notes; want at least 40 each", len(secrets), len(ordinary))
	}
}
