package code

import (
	"strings"
	"time"
)

// Cochange returns up to k files that changed in the same commits as path,
// strongest first (recent commits weigh more).
func (ix *Index) Cochange(path string, k int) []Cochange {
	h := ix.history()
	ix.hmu.Lock()
	defer ix.hmu.Unlock()
	return h.Cochange(cleanPath(path), k, time.Now())
}

// Experts returns the authors who changed path, most relevant first.
func (ix *Index) Experts(path string) []Expert {
	h := ix.history()
	ix.hmu.Lock()
	defer ix.hmu.Unlock()
	return h.Experts(cleanPath(path), time.Now())
}

// Log returns up to k recent commits touching pathOrSymbol, newest first:
// a path, or a symbol as Card accepts it (the commits touching its file).
func (ix *Index) Log(pathOrSymbol string, k int) []Commit {
	p := cleanPath(pathOrSymbol)
	ix.mu.RLock()
	_, known := ix.byPath[p]
	ix.mu.RUnlock()
	if !known && !strings.HasSuffix(pathOrSymbol, "/") {
		if c, err := ix.Card(pathOrSymbol, false); err == nil {
			p = c.Path
		}
	}
	h := ix.history()
	ix.hmu.Lock()
	defer ix.hmu.Unlock()
	return h.Log(p, k)
}

// history returns the history's stats as loaded.
func (ix *Index) history() *hStats {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	return ix.st.History
}
