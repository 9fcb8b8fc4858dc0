package index

import (
	"os"
	"testing"

	"github.com/miramem/mira/internal/locomo"
)

// loadLoCoMo reads the LoCoMo dev split from the directory MIRA_LOCOMO
// names, and skips tb when it names none: the LoCoMo measurements run
// only when asked.
func loadLoCoMo(tb testing.TB) ([]locomo.Turn, []locomo.Question, string) {
	tb.Helper()
	dir := os.Getenv("MIRA_LOCOMO")
	if dir == "" {
		tb.Skip("MIRA_LOCOMO is not set")
	}
	turns, questions, err := locomo.Load(dir)
	if err != nil {
		tb.Fatal(err)
	}
	return turns, questions, dir
}
