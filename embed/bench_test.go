package embed

import (
	"bytes"
	"context"
	"sync"
	"testing"
)

// Benchmarks on generated corpora of ~30-word texts. Run them with, e.g.,
//
//	go test ./embed -run '^$' -bench . -benchtime 3x
//
// entries/s counts texts embedded per second on all cores.

var benchCorpus = sync.OnceValue(func() []string { return corpus(100000, 30) })

var benchModel = sync.OnceValues(func() (*Model, error) { return Fit(benchCorpus(), FitOptions{}) })

func benchEmbed(b *testing.B, embed func(ctx context.Context, texts []string) ([][]float32, error)) {
	texts := benchCorpus()[:20000]
	ctx := context.Background()
	b.ResetTimer()
	for b.Loop() {
		if _, err := embed(ctx, texts); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*len(texts))/b.Elapsed().Seconds(), "entries/s")
}

func BenchmarkEmbedHashing(b *testing.B) {
	benchEmbed(b, NewHashing(0).Embed)
}

func BenchmarkEmbedModel(b *testing.B) {
	m, err := benchModel()
	if err != nil {
		b.Fatal(err)
	}
	benchEmbed(b, m.Embed)
}

func BenchmarkEmbedSequence(b *testing.B) {
	m, err := benchModel()
	if err != nil {
		b.Fatal(err)
	}
	benchEmbed(b, m.EmbedSequence)
}

// BenchmarkFit100k fits the default model on 100,000 texts, on all of them
// and on a sample of 25,000 (FitOptions.MaxTexts, as the index fits), and
// reports the model file's size.
func BenchmarkFit100k(b *testing.B) {
	texts := benchCorpus()
	for _, c := range []struct {
		name string
		max  int
	}{{"all", 0}, {"sample25k", 25000}} {
		b.Run(c.name, func(b *testing.B) {
			var m *Model
			for b.Loop() {
				var err error
				if m, err = Fit(texts, FitOptions{MaxTexts: c.max}); err != nil {
					b.Fatal(err)
				}
			}
			var buf bytes.Buffer
			if _, err := m.WriteTo(&buf); err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(buf.Len()), "model-bytes")
			b.ReportMetric(float64(m.Terms()), "terms")
			b.ReportMetric(float64(m.p.SemDim), "learned-dims")
		})
	}
}

// BenchmarkSymEigen measures the eigendecomposition at the end of a fit:
// the default learned block (256) plus the oversampling.
func BenchmarkSymEigen(b *testing.B) {
	const n = 256 + lsaOversample
	a := newTall(4*n, n)
	state := uint64(11)
	for i := range a.v {
		state += 0x9e3779b97f4a7c15
		a.v[i] = float32(float64(mix(state)>>11)/(1<<53) - 0.5)
	}
	g := a.cross(a, 1) // symmetric and positive semi-definite, as a fit's
	for b.Loop() {
		symEigen(g)
	}
}

// BenchmarkCross measures yᵀy and yᵀz for a fit's tall matrices: a row per
// term of a 20,000-word vocabulary, the default learned block plus the
// oversampling as columns. Orthonormalising and the Rayleigh–Ritz step
// are made of these.
func BenchmarkCross(b *testing.B) {
	const rows, cols = 20000, 256 + lsaOversample
	y, z := newTall(rows, cols), newTall(rows, cols)
	state := uint64(13)
	for i := range y.v {
		state += 0x9e3779b97f4a7c15
		y.v[i] = float32(float64(mix(state)>>11)/(1<<53) - 0.5)
		z.v[i] = float32(float64(mix(^state)>>11)/(1<<53) - 0.5)
	}
	b.Run("sym", func(b *testing.B) {
		for b.Loop() {
			y.cross(y, 2)
		}
	})
	b.Run("pair", func(b *testing.B) {
		for b.Loop() {
			y.cross(z, 2)
		}
	})
}

// BenchmarkOrthonormalize measures one Cholesky QR pass over a fit's tall
// matrix (see BenchmarkCross).
func BenchmarkOrthonormalize(b *testing.B) {
	const rows, cols = 20000, 256 + lsaOversample
	y := newTall(rows, cols)
	state := uint64(17)
	for i := range y.v {
		state += 0x9e3779b97f4a7c15
		y.v[i] = float32(float64(mix(state)>>11)/(1<<53) - 0.5)
	}
	for b.Loop() {
		y.orthonormalize(2, 1)
	}
}
