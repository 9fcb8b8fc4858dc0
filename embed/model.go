package embed

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"runtime"
	"slices"
	"sync"
)

// FitOptions are the choices made when fitting a model. The zero value
// gives the defaults, which are the measured best (see eval_test.go).
type FitOptions struct {
	// Dim is the total vector length (default 384): the learned block gets
	// SemDim of it and the hashed lexical block the rest.
	Dim int
	// SemDim is the length of the learned block. Zero picks it from the
	// corpus size N: N^0.75 rounded to a multiple of 8, at most N/4 (at
	// least 2) and at most Dim-128, since the best rank grows with the
	// corpus (TestLoCoMoSweep; docs/performance.md). Negative means no
	// learned block: the model then only weights the lexical features by
	// IDF.
	SemDim int
	// Window is how many texts on each side of a text count as its context
	// when learning (default 2; negative means none); WindowWeight is their
	// weight against the text's own words (default 0.5). Context is what
	// lets a word meet the words of the conversation around it: on LoCoMo
	// it raised vector recall@10 by more than a tenth, and its profile
	// matters little (TestLoCoMoSweep; docs/performance.md).
	Window       int
	WindowWeight float64
	// MinDF is the number of texts a word must occur in to get a learned
	// vector (default 1). With a window, even a word seen once has a
	// context to learn from, and rare words are the telling ones (MinDF 2
	// lost recall on LoCoMo; docs/performance.md).
	MinDF int
	// MaxVocab caps the words with learned vectors, most frequent first
	// (default 50,000), which bounds the model file and the fit time.
	MaxVocab int
	// Workers is the parallelism (default GOMAXPROCS). It never changes the
	// result.
	Workers int
	// MaxTexts bounds the texts the model is fitted on (0: all of them).
	// A larger corpus is sampled in runs of sampleRun consecutive texts
	// spread evenly over it, so that most texts keep the neighbours their
	// window learns from. The fit's time and memory grow with its texts;
	// the learned rank stops growing long before (see SemDim), and word
	// statistics from tens of thousands of texts are close to those of
	// the whole.
	MaxTexts int

	tune *params // tests only: replaces the default feature parameters
}

// Model is a fitted text embedder: the document frequency of every lexical
// feature and LSA term vectors learned from a corpus (the store's texts).
// A model is frozen once fitted; refitting gives a new model with a new ID,
// and vectors from different models must never be mixed. Model implements
// Embedder and is safe for concurrent use.
type Model struct {
	p    params
	docs uint64

	// dfTab is a two-probe count-min table of document frequencies over
	// hashed features, each cell round(16·ln df)+1 in a byte (0 = unseen),
	// so any feature, character n-grams and bigrams included, has an IDF
	// without a vocabulary. Two probes keep a rare feature that shares a
	// cell with a common one from looking common.
	dfBits uint8
	dfTab  []uint8
	idfOf  [256]float64 // IDF by cell value

	// terms are the word-stem hashes with learned vectors, ascending; row t
	// of qvec (SemDim wide) times scale[t] is terms[t]'s vector: int8 per
	// component with a float32 scale per row, in memory as on disk.
	terms  []uint64
	qvec   []int8
	scale  []float32
	sigma  []float32 // singular values of the learned dimensions
	termIx map[uint64]int32

	id string
}

const (
	defaultDim          = 384
	defaultWindow       = 2
	defaultWindowWeight = 0.5
	defaultMaxVocab     = 50000
	// minLexDim is the smallest lexical block the adaptive rank leaves.
	minLexDim = 128
	// defaultSemWeight is the share of the learned block in the cosine.
	// The lexical block adds little on LoCoMo (docs/performance.md) but is
	// kept for robustness: words that appear after the model was fitted
	// have no learned vector, and the lexical block still matches them.
	defaultSemWeight = 0.85
)

// withDefaults fills in the zero fields of o for a corpus of n texts.
func (o FitOptions) withDefaults(n int) FitOptions {
	if o.Dim <= 0 {
		o.Dim = defaultDim
	}
	switch {
	case o.SemDim < 0:
		o.SemDim = 0
	case o.SemDim == 0:
		// A rank near the number of texts reproduces the texts instead of
		// generalising from them, hence the cap at N/4 for tiny stores.
		k := min(math.Pow(float64(n), 0.75), float64(n)/4)
		if k >= 8 {
			k = math.Round(k/8) * 8
		}
		o.SemDim = min(max(int(k), 2), o.Dim-minLexDim)
	}
	switch {
	case o.Window < 0:
		o.Window = 0
	case o.Window == 0:
		o.Window = defaultWindow
	}
	if o.WindowWeight <= 0 {
		o.WindowWeight = defaultWindowWeight
	}
	if o.MinDF <= 0 {
		o.MinDF = 1
	}
	if o.MaxVocab <= 0 {
		o.MaxVocab = defaultMaxVocab
	}
	if o.Workers <= 0 {
		o.Workers = runtime.GOMAXPROCS(0)
	}
	return o
}

// Fit learns a model from texts, which should be in the store's natural
// order (by scope, then time): a text's neighbours in the slice are its
// context. The same texts in the same order give a bit-identical model with
// any number of workers (on one CPU architecture: the Go compiler fuses
// multiply-adds on some). An empty corpus is an error.
func Fit(texts []string, opt FitOptions) (*Model, error) {
	if len(texts) == 0 {
		return nil, errors.New("fit embedding model: no texts")
	}
	texts = sample(texts, opt.MaxTexts)
	o := opt.withDefaults(len(texts))
	if o.SemDim <= 0 && opt.SemDim >= 0 || o.SemDim >= o.Dim {
		return nil, fmt.Errorf("fit embedding model: dimension %d leaves no room for a learned block of %d", o.Dim, o.SemDim)
	}
	p := defaultParams(o.Dim - o.SemDim)
	if o.tune != nil {
		p = *o.tune
		p.LexDim = o.Dim - o.SemDim
	}
	p.SemDim = o.SemDim
	p.Window, p.WindowWeight = o.Window, o.WindowWeight
	if o.tune == nil {
		p.SemWeight = defaultSemWeight
	}
	if p.SemDim == 0 {
		p.SemWeight = 0
	}

	m := &Model{p: p, docs: uint64(len(texts))}
	totalBytes := 0
	for _, t := range texts {
		totalBytes += len(t)
	}
	// About three features per byte of text (character n-grams dominate),
	// most of them repeats: a table with a cell per byte keeps the load
	// low, and the bounds keep the file between 4 KiB and 2 MiB.
	m.dfBits = uint8(min(max(bits.Len(uint(totalBytes)), 12), 21))

	words, counts, wordDF := m.countFeatures(texts, o.Workers)
	m.dfTab = make([]uint8, len(counts))
	for i, c := range counts {
		if c > 0 {
			m.dfTab[i] = quantDF(c)
		}
	}
	m.initIDF()
	if p.SemDim > 0 {
		ix := m.selectVocab(wordDF, o)
		m.fitLSA(words, ix, o)
	}
	m.finish()
	return m, nil
}

// sampleRun is the length of the runs of consecutive texts a bounded fit
// takes (see FitOptions.MaxTexts): far longer than a window, so that only
// the texts at a run's two ends lose context.
const sampleRun = 256

// sample returns at most limit texts (all of them when limit is 0 or not
// smaller): runs of sampleRun consecutive texts whose starts are spread
// evenly over the slice, in their order. The same texts always give the
// same sample.
func sample(texts []string, limit int) []string {
	if limit <= 0 || len(texts) <= limit {
		return texts
	}
	run := min(sampleRun, limit)
	runs := limit / run
	out := make([]string, 0, runs*run)
	for i := range runs {
		lo := 0
		if runs > 1 {
			lo = i * (len(texts) - run) / (runs - 1)
		}
		out = append(out, texts[lo:lo+run]...)
	}
	return out
}

// docWords is the content words of one text: word-stem features with their
// counts, sorted by hash.
type docWords []feature

// countFeatures extracts every text's features in parallel. It returns each
// text's content words, the count-min table of document frequencies and the
// exact document frequency of every content word.
func (m *Model) countFeatures(texts []string, workers int) ([]docWords, []uint32, map[uint64]uint32) {
	size := 1 << m.dfBits
	words := make([]docWords, len(texts))
	type part struct {
		counts []uint32
		df     map[uint64]uint32
	}
	workers = max(min(workers, len(texts)/256), 1)
	parts := make([]part, workers)
	var wg sync.WaitGroup
	step := (len(texts) + workers - 1) / workers
	for w := range workers {
		lo, hi := w*step, min((w+1)*step, len(texts))
		wg.Add(1)
		go func() {
			defer wg.Done()
			pt := part{counts: make([]uint32, size), df: make(map[uint64]uint32)}
			var fs featureSet
			for i := lo; i < hi; i++ {
				fs.extract(fs.tokenize(texts[i]), &m.p)
				var dw docWords
				for _, f := range fs.feats {
					a, b := m.probes(f.h)
					pt.counts[a]++
					if b != a {
						pt.counts[b]++
					}
					if f.kind == kindWord && !f.stop {
						dw = append(dw, f)
						pt.df[f.h]++
					}
				}
				words[i] = dw
			}
			parts[w] = pt
		}()
	}
	wg.Wait()
	// Integer sums: the order of merging cannot change the result.
	counts := parts[0].counts
	df := parts[0].df
	for _, pt := range parts[1:] {
		for i, c := range pt.counts {
			counts[i] += c
		}
		for h, c := range pt.df {
			df[h] += c
		}
	}
	return words, counts, df
}

// probes returns the two cells of the document-frequency table for hash h.
func (m *Model) probes(h uint64) (int, int) {
	mask := uint64(1)<<m.dfBits - 1
	return int((h >> keyBits) & mask), int((h >> 34) & mask)
}

// quantDF stores a document frequency as round(16·ln df)+1 in a byte: 3%
// steps, far finer than IDF needs.
func quantDF(df uint32) uint8 {
	return uint8(min(math.Round(16*math.Log(float64(df)))+1, 255))
}

// idf is BM25's smoothed inverse document frequency, ln(1+(N-df+0.5)/
// (df+0.5)): near zero for a feature in every text, ln(2N+2) for one never
// seen. It is looked up by the quantised document frequency, the smaller
// of the feature's two cells.
func (m *Model) idf(h uint64) float64 {
	a, b := m.probes(h)
	return m.idfOf[min(m.dfTab[a], m.dfTab[b])]
}

// initIDF fills the IDF of every cell value.
func (m *Model) initIDF() {
	n := float64(m.docs)
	for q := range m.idfOf {
		df := 0.0
		if q > 0 {
			df = min(math.Exp(float64(q-1)/16), n)
		}
		m.idfOf[q] = math.Log(1 + (n-df+0.5)/(df+0.5))
	}
}

// finish derives the in-memory lookup structures and the ID from the
// persisted fields; a fitted model and one read from disk both go through
// it, so they embed identically.
func (m *Model) finish() {
	m.finishWith(m.checksum())
}

// finishWith is finish with the model's checksum already known: ReadModel
// has just verified it against the file, and encoding the model again to
// hash it would cost a reader several milliseconds for nothing.
func (m *Model) finishWith(sum [sha256.Size]byte) {
	m.initIDF()
	m.termIx = make(map[uint64]int32, len(m.terms))
	for i, h := range m.terms {
		m.termIx[h] = int32(i)
	}
	m.id = fmt.Sprintf("mira-lsa-v1/%d/%x", m.Dim(), sum[:6])
}

// ID returns "mira-lsa-v1/<dim>/<12 hex digits of the model's checksum>":
// it changes whenever the model is refitted on different texts.
func (m *Model) ID() string { return m.id }

// Dim returns the vector length: the lexical and the learned block.
func (m *Model) Dim() int { return m.p.LexDim + m.p.SemDim }

// Docs returns the number of texts the model was fitted on.
func (m *Model) Docs() int { return int(m.docs) }

// Terms returns the number of words with learned vectors.
func (m *Model) Terms() int { return len(m.terms) }

// Embed returns one vector per text: the IDF-weighted hashed lexical block
// followed by the learned block, each unit length before they are weighted,
// so that the cosine of two vectors is (1-w)·lexical + w·learned. Use it
// for queries and for texts that stand alone; texts that are part of an
// ordered stream embed better with EmbedSequence.
func (m *Model) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	return m.EmbedSequenceWindow(ctx, texts, 0)
}

// EmbedSequence embeds texts that form an ordered stream, such as one
// scope's turns in time order. Each text's learned block also takes in its
// neighbours' words, with the window and weight the model was fitted with,
// so that a reply ("Yes, every weekend!") is found by what it answers. The
// lexical block is the text's own. On LoCoMo this raised the vector's
// recall@5/@10 from 0.618/0.722 to 0.643/0.740 and the fused ones from
// 0.614/0.717 to 0.644/0.753. Queries are embedded with Embed.
func (m *Model) EmbedSequence(ctx context.Context, texts []string) ([][]float32, error) {
	return m.EmbedSequenceWindow(ctx, texts, m.p.Window)
}

// seqScratch is the room a chunk of EmbedSequenceWindow works in, kept
// for the next chunk.
type seqScratch struct {
	fs    featureSet
	sums  []float64   // the learned sums of the last 2·window+1 texts
	found []bool      // whether each of them has any
	feats [][]feature // the features of the last window+1 texts
	s     []float64
}

var seqScratchPool = sync.Pool{New: func() any { return new(seqScratch) }}

// EmbedSequenceWindow is EmbedSequence with window neighbours on each side
// (0 embeds every text on its own, as Embed does).
func (m *Model) EmbedSequenceWindow(ctx context.Context, texts []string, window int) ([][]float32, error) {
	dim, k := m.Dim(), m.p.SemDim
	window = max(window, 0)
	out := allocVectors(len(texts), dim)
	err := parallelChunks(ctx, len(texts), func(lo, hi int) {
		// The chunk's texts and a halo of window texts either side. A
		// text is composed as soon as the last text of its window has
		// been read, so only the learned sums of the last 2·window+1
		// texts and the features of the last window+1 are kept, in
		// room that the next text and the next chunk reuse: a copy of
		// every text's features had been a fifth of a rebuild's
		// allocations (1.7 GB at 100,000 entries), and a word cache per
		// chunk another tenth.
		from, to := max(lo-window, 0), min(hi+window, len(texts))
		sc := seqScratchPool.Get().(*seqScratch)
		defer seqScratchPool.Put(sc)
		span := 2*window + 1
		sc.sums = slices.Grow(sc.sums[:0], span*k)[:span*k]
		sc.found = slices.Grow(sc.found[:0], span)[:span]
		for len(sc.feats) < window+1 {
			sc.feats = append(sc.feats, nil)
		}
		sc.s = slices.Grow(sc.s[:0], k)[:k]
		fs, s := &sc.fs, sc.s
		compose := func(i int) {
			clear(s)
			have := false
			for j := max(i-window, 0); j < min(i+window+1, len(texts)); j++ {
				if !sc.found[j%span] {
					continue
				}
				w := 1.0
				if j != i {
					w = m.p.WindowWeight
				}
				for c, x := range sc.sums[j%span*k : (j%span+1)*k] {
					s[c] += w * x
				}
				have = true
			}
			m.compose(sc.feats[i%(window+1)], s, have, out[i])
		}
		for i := from; i < to; i++ {
			fs.extract(fs.tokenize(texts[i]), &m.p)
			r := &sc.feats[i%(window+1)]
			*r = append((*r)[:0], fs.feats...)
			sum := sc.sums[i%span*k : (i%span+1)*k]
			clear(sum)
			sc.found[i%span] = m.semSum(fs.feats, sum)
			if d := i - window; d >= lo && d < hi {
				compose(d)
			}
		}
		// The texts whose window the end of the slice cuts short.
		for d := max(lo, to-window); d < hi; d++ {
			compose(d)
		}
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// semSum adds the IDF-weighted learned vectors of the content words among
// feats to s (the LSA fold-in of the text) and reports whether any word had
// a learned vector.
func (m *Model) semSum(feats []feature, s []float64) bool {
	k := m.p.SemDim
	if k == 0 {
		return false
	}
	found := false
	for _, f := range feats {
		if f.kind != kindWord || f.stop {
			continue
		}
		t, ok := m.termIx[f.h]
		if !ok {
			continue
		}
		v := sublinearTF(f.tf) * m.idf(f.h)
		// Term vectors are dequantised here, for the few terms a text
		// has, rather than all at once when the model is read: a
		// one-query process would otherwise spend milliseconds expanding
		// tens of thousands of vectors it never looks at.
		axpyQ8(s[:k], v, m.qvec[int(t)*k:int(t)*k+k], m.scale[t])
		found = true
	}
	return found
}

// compose writes the final vector: the lexical block of feats and the
// learned block s, each scaled to its share of unit length.
func (m *Model) compose(feats []feature, s []float64, found bool, out []float32) {
	lex, sem := out[:m.p.LexDim], out[m.p.LexDim:]
	lexical(feats, &m.p, m, lex)
	normalize(lex)
	var ss float64
	if found {
		for _, x := range s {
			ss += x * x
		}
	}
	if ss == 0 {
		// No learned word: the lexical block alone, already unit length.
		return
	}
	ws := math.Sqrt(m.p.SemWeight / ss)
	wl := float32(math.Sqrt(1 - m.p.SemWeight))
	for i := range lex {
		lex[i] *= wl
	}
	for j, x := range s {
		sem[j] = float32(x * ws)
	}
}
