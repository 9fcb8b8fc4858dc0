package embed

import (
	"context"
	"fmt"
	"runtime"
	"sync"
)

// Embedder turns texts into unit vectors of a fixed dimension. Vectors from
// embedders with different IDs must never be compared with each other.
type Embedder interface {
	// ID identifies the embedder, its parameters and its model, e.g.
	// "mira-hash-v1/384" or "mira-lsa-v1/384/1f2e3d4c5b6a".
	ID() string
	// Dim is the length of every vector.
	Dim() int
	// Embed returns one vector per text, in order. A text with no words
	// gets the zero vector (the only vector that is not of unit length).
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}

// params are the knobs of the feature pipeline. They are persisted in a
// model, so a model embeds exactly as it did when it was fitted even if the
// defaults change later.
type params struct {
	LexDim int // length of the hashed lexical block
	SemDim int // length of the learned (LSA) block; 0 without a model

	MinGram, MaxGram int // character n-gram sizes, boundary marks included

	// Shares of the lexical block (each family is normalised first).
	WordWeight, BigramWeight, CharWeight float64
	// StopWeight multiplies the weight of stop-word unigrams.
	StopWeight float64
	// SemWeight is the share of the learned block in the final vector: the
	// cosine of two vectors is (1-SemWeight)·lexical + SemWeight·learned.
	SemWeight float64
	// Window and WindowWeight are the context the learned block was fitted
	// with, which EmbedSequence uses again.
	Window       int
	WindowWeight float64
}

// DefaultHashDim is the default vector length of the pure hashing
// embedder: what the vector index was sized for (100,000 × 384 searched
// exhaustively in about 13 ms).
const DefaultHashDim = 384

// defaultParams are the lexical defaults. On LoCoMo, hashed into 4,096
// dimensions without IDF, words alone gave vector recall@5/@10 0.351/0.435,
// with bigrams 0.355/0.443, with n-grams 0.371/0.448, with both
// 0.373/0.456 (TestLoCoMoSweep).
func defaultParams(dim int) params {
	return params{
		LexDim:       dim,
		MinGram:      3,
		MaxGram:      5,
		WordWeight:   1,
		BigramWeight: 0.3,
		CharWeight:   0.5,
		StopWeight:   0.1,
	}
}

// Hashing is the embedder with no fitted state: signed feature hashing of
// word stems, bigrams and character n-grams, sublinear TF, stop words
// weighted down, L2-normalised. Without corpus statistics every content
// feature weighs the same. It is the fallback before a store has a model.
type Hashing struct {
	p params
}

// NewHashing returns the pure hashing embedder with vectors of length dim
// (DefaultHashDim when dim <= 0).
func NewHashing(dim int) *Hashing {
	if dim <= 0 {
		dim = DefaultHashDim
	}
	return &Hashing{p: defaultParams(dim)}
}

// ID returns "mira-hash-v1/<dim>".
func (h *Hashing) ID() string { return fmt.Sprintf("mira-hash-v1/%d", h.p.LexDim) }

// Dim returns the vector length.
func (h *Hashing) Dim() int { return h.p.LexDim }

// Embed returns one unit vector per text.
func (h *Hashing) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := allocVectors(len(texts), h.p.LexDim)
	err := parallelChunks(ctx, len(texts), func(lo, hi int) {
		var fs featureSet
		for i := lo; i < hi; i++ {
			fs.extract(fs.tokenize(texts[i]), &h.p)
			lexical(fs.feats, &h.p, nil, out[i])
			normalize(out[i])
		}
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// allocVectors returns n vectors of length dim sharing one backing array
// (one allocation instead of n).
func allocVectors(n, dim int) [][]float32 {
	out := make([][]float32, n)
	backing := make([]float32, n*dim)
	for i := range out {
		out[i] = backing[i*dim : (i+1)*dim : (i+1)*dim]
	}
	return out
}

// chunk is the number of texts a worker takes at a time.
const chunk = 256

// parallelChunks runs f over [0,n) in chunks on all cores, checking ctx
// between chunks. f must write only the results of its own chunk, so the
// outcome does not depend on scheduling.
func parallelChunks(ctx context.Context, n int, f func(lo, hi int)) error {
	workers := min(runtime.GOMAXPROCS(0), (n+chunk-1)/chunk)
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		next int
	)
	work := func() {
		for ctx.Err() == nil {
			mu.Lock()
			lo := next
			next += chunk
			mu.Unlock()
			if lo >= n {
				return
			}
			f(lo, min(lo+chunk, n))
		}
	}
	if workers <= 1 {
		work()
	} else {
		for range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				work()
			}()
		}
		wg.Wait()
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("embed: %w", err)
	}
	return nil
}
