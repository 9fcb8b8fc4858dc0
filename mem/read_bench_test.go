package mem

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// BenchmarkStoreRead reads and parses 1,000 entry files of about 300
// bytes, as a rebuild does each of a store's: the system calls of the read
// and the front-matter parse.
func BenchmarkStoreRead(b *testing.B) {
	st := &Store{Root: b.TempDir()}
	dir := filepath.Join(st.Root, "entries", "global", "notes")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		b.Fatal(err)
	}
	var rels []string
	for i := range 1000 {
		e := &Entry{ID: fmt.Sprintf("01JD3ZK4Q8V6N2M7T5R9W%05d", i), Kind: KindNote, Scope: "global",
			CreatedAt: time.Date(2026, 11, 21, 10, 0, i, 0, time.UTC), Tags: []string{"db"}, Project: "shop",
			Source: "cli", Body: strings.Repeat(fmt.Sprintf("note %d about the shop database ", i), 6)}
		data, err := e.Marshal()
		if err != nil {
			b.Fatal(err)
		}
		rel := fmt.Sprintf("entries/global/notes/%05d.md", i)
		if err := os.WriteFile(filepath.Join(st.Root, rel), data, 0o644); err != nil {
			b.Fatal(err)
		}
		rels = append(rels, rel)
	}
	b.ResetTimer()
	for b.Loop() {
		for _, rel := range rels {
			if _, err := st.Read(rel); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(rels)), "ns/file")
}
