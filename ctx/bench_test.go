package ctx

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/miramem/mira/mem"
)

// benchItems makes n retrieved memories of about size bytes each: prose
// with some code, paths and numbers, in lines, all different.
func benchItems(n, size int) []Item {
	vocab := strings.Fields(`the a we our it is was to of and in for on with that this as by at from
		decision database PostgreSQL index query cache export invoice billing customer retry queue
		worker deploy staging production config token budget context memory summary agent tool
		because however therefore instead although func return err nil struct map slice string
		/var/lib/mira ./cmd/mira-context/main.go https://example.com/docs v1.2.3 2026-11-21 42 3.14 1,000`)
	r := rand.New(rand.NewPCG(1, 1))
	items := make([]Item, n)
	for i := range items {
		var b strings.Builder
		fmt.Fprintf(&b, "Memory %d.", i)
		for b.Len() < size {
			line := 0
			for line < 60+r.IntN(60) {
				w := vocab[r.IntN(len(vocab))]
				b.WriteByte(' ')
				b.WriteString(w)
				line += len(w) + 1
			}
			b.WriteString(".\n")
		}
		rc := mem.Record{
			ID: fmt.Sprintf("01JBENCH%05d", i), Kind: mem.KindFact, Scope: "global", Source: "cli",
			Text: b.String(), CreatedAt: day(i % 28), Score: score(float64(r.IntN(1000)) / 1000),
		}
		items[i] = FromRecord(rc)
	}
	return items
}

// BenchmarkTokenize is the yardstick: counting every candidate's text
// once, one after the other.
func BenchmarkTokenize(b *testing.B) {
	items := benchItems(1000, 3000)
	enc := mustTokenizer(b, "")
	enc.Count("load")
	var bytes int64
	for _, it := range items {
		bytes += int64(len(it.Record.Text))
	}
	b.SetBytes(bytes)
	for b.Loop() {
		for _, it := range items {
			enc.Count(it.Record.Text)
		}
	}
}

// BenchmarkPlan plans 1,000 candidates of about 3 KB into 8,000 tokens.
// Light mode prices cards; heavy mode prices every whole text, so it is the
// one to compare with BenchmarkTokenize.
func BenchmarkPlan(b *testing.B) {
	items := benchItems(1000, 3000)
	var bytes int64
	for _, it := range items {
		bytes += int64(len(it.Record.Text))
	}
	for _, mode := range []Mode{ModeLight, ModeHeavy} {
		b.Run(string(mode), func(b *testing.B) {
			opt := Options{Mode: mode, Limits: mode.Defaults(), Query: "billing export"}
			opt.Limits.Budget = 8000
			mustTokenizer(b, "").Count("load")
			b.SetBytes(bytes)
			var p *Plan
			for b.Loop() {
				var err error
				if p, err = Build(items, opt); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(p.Used), "tokens")
			b.ReportMetric(float64(len(p.Included)), "included")
		})
	}
}
