package embed

import (
	"math"
	"math/bits"
	"slices"
	"sync"
	"unicode/utf8"
)

// kind tells which family a hashed feature belongs to; each family is
// hashed with its own seed so a word and a character n-gram with the same
// letters never share a key.
type kind uint8

const (
	kindWord   kind = iota // a word stem
	kindBigram             // two adjacent content-word stems
	kindChar               // a character n-gram of a content word, with boundary marks
	numKinds
)

var kindSeed = [numKinds]uint64{
	kindWord:   0x9e3779b97f4a7c15,
	kindBigram: 0xc2b2ae3d27d4eb4f,
	kindChar:   0x165667b19e3779f9,
}

// feature is one distinct feature of a text with its raw count.
type feature struct {
	h    uint64
	kind kind
	stop bool // a stop-word stem (words only)
	tf   float32
}

const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

// hashString is FNV-1a over s, started from seed. Callers finish it with
// mix, a SplitMix64 avalanche, so that every bit used for bucketing and
// sign is well mixed. Both are fixed forever: persisted models and stored
// vectors depend on them.
func hashString(seed uint64, s string) uint64 {
	h := uint64(fnvOffset) ^ seed
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= fnvPrime
	}
	return h
}

// hashMore continues an FNV-1a hash with a separator byte and s, so a bigram
// is hashed without building its string.
func hashMore(h uint64, s string) uint64 {
	h ^= ' '
	h *= fnvPrime
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= fnvPrime
	}
	return h
}

// mix is the SplitMix64 finaliser.
func mix(h uint64) uint64 {
	h ^= h >> 30
	h *= 0xbf58476d1ce4e5b9
	h ^= h >> 27
	h *= 0x94d049bb133111eb
	h ^= h >> 31
	return h
}

// featureSet is the reusable scratch space of one text's feature extraction.
type featureSet struct {
	keys  []uint64
	tmp   []uint64 // sortKeys' scratch
	count []int32  // sortKeys' buckets
	toks  []token
	words map[string]token // tokenize's cache
	feats []feature
	runes []int // rune start offsets of the bracketed word, for n-grams
	gram  []byte
}

// A feature key is its hash with the low three bits replaced by the kind
// and the stop flag, so that sorting plain integers both groups repeats
// and fixes the order of features; bucket and sign come from the high bits.
const keyBits = 3

func key(h uint64, k kind, stop bool) uint64 {
	h = h&^(1<<keyBits-1) | uint64(k)
	if stop {
		h |= 4
	}
	return h
}

// extract fills fs.feats with the distinct features of toks, sorted by key
// (a fixed order, so every float sum over them is deterministic), counts
// merged. Stop words contribute a unigram (weighted down later) but no
// bigrams or n-grams: they would only add noise shared by every text.
func (fs *featureSet) extract(toks []token, p *params) {
	keys := fs.keys[:0]
	prev := ""
	for _, t := range toks {
		keys = append(keys, key(mix(hashString(kindSeed[kindWord], t.stem)), kindWord, t.stop))
		if t.stop {
			continue
		}
		if p.BigramWeight > 0 && prev != "" {
			keys = append(keys, key(mix(hashMore(hashString(kindSeed[kindBigram], prev), t.stem)), kindBigram, false))
		}
		prev = t.stem
		if p.CharWeight > 0 {
			keys = fs.charGrams(keys, t.word, p)
		}
	}
	fs.sortKeys(keys)
	fs.keys = keys
	f := fs.feats[:0]
	for _, k := range keys {
		if n := len(f); n > 0 && f[n-1].h == k {
			f[n-1].tf++
			continue
		}
		f = append(f, feature{h: k, kind: kind(k & 3), stop: k&4 != 0, tf: 1})
	}
	fs.feats = f
}

// sortKeys sorts keys in place, as slices.Sort does. The keys are
// hashes, their top bits spread evenly: one pass counts them into buckets
// by those bits, about two keys to a bucket, a second moves them to their
// buckets, and each bucket is sorted by insertion (a crowded one by
// slices.Sort). A text's thousand or so keys sort in a third of pdqsort's
// time; a 100k rebuild had spent 1.5 s of CPU sorting them.
func (fs *featureSet) sortKeys(keys []uint64) {
	n := len(keys)
	if n < 64 {
		slices.Sort(keys)
		return
	}
	nb := min(uint(bits.Len(uint(n))), 12)
	shift := 64 - nb
	if cap(fs.count) < 1<<nb {
		fs.count = make([]int32, 1<<12)
	}
	c := fs.count[:1<<nb]
	clear(c)
	for _, k := range keys {
		c[k>>shift]++
	}
	start := int32(0)
	for i, m := range c {
		c[i] = start
		start += m
	}
	if cap(fs.tmp) < n {
		fs.tmp = make([]uint64, n)
	}
	tmp := fs.tmp[:n]
	for _, k := range keys {
		b := k >> shift
		tmp[c[b]] = k
		c[b]++
	}
	from := 0 // c[b] is now the end of bucket b
	for _, end := range c {
		b := tmp[from:end]
		if len(b) > 16 {
			slices.Sort(b)
		} else {
			for i := 1; i < len(b); i++ {
				for j := i; j > 0 && b[j] < b[j-1]; j-- {
					b[j], b[j-1] = b[j-1], b[j]
				}
			}
		}
		from = int(end)
	}
	copy(keys, tmp)
}

// charGrams appends the keys of the MinGram..MaxGram character n-grams of
// "<word>". Words are hashed by runes, not bytes, so accented letters stay
// whole.
func (fs *featureSet) charGrams(keys []uint64, word string, p *params) []uint64 {
	g := append(fs.gram[:0], '<')
	g = append(g, word...)
	g = append(g, '>')
	fs.gram = g
	r := fs.runes[:0]
	for i := 0; i < len(g); {
		r = append(r, i)
		if g[i] < utf8.RuneSelf {
			i++
		} else {
			_, size := utf8.DecodeRune(g[i:])
			i += size
		}
	}
	n := len(r)
	r = append(r, len(g))
	fs.runes = r
	seed := kindSeed[kindChar]
	for size := p.MinGram; size <= p.MaxGram; size++ {
		if size > n {
			break
		}
		for i := 0; i+size <= n; i++ {
			h := uint64(fnvOffset) ^ seed
			for _, c := range g[r[i]:r[i+size]] {
				h ^= uint64(c)
				h *= fnvPrime
			}
			keys = append(keys, key(mix(h), kindChar, false))
		}
	}
	return keys
}

// sublinearTF is a feature's weight for its count in a text, 1+ln tf. Most
// counts are small whole numbers, whose weights come from a table: the
// logarithm had been a tenth of embedding a million texts (mostly of 1).
func sublinearTF(tf float32) float64 {
	if i := int(tf); float32(i) == tf && i >= 0 && i < len(tfWeights) {
		return tfWeights[i]
	}
	return 1 + math.Log(float64(tf))
}

// tfWeights holds 1+ln n for the counts n below 64.
var tfWeights = func() (w [64]float64) {
	for n := range w {
		w[n] = 1 + math.Log(float64(n))
	}
	return w
}()

// weigher gives a feature's inverse document frequency; nil means no corpus
// statistics (every feature weighs 1).
type weigher interface {
	idf(h uint64) float64
}

// valsPool keeps the room lexical weighs a long text's features in.
var valsPool = sync.Pool{New: func() any { return new([]float64) }}

// lexical adds the weighted lexical features to out (len = p.LexDim) as a
// signed feature-hashing vector. Each family (words, bigrams, n-grams) is
// normalised on its own and then scaled by its weight, so the weights are
// shares of the lexical similarity rather than of raw counts: a long word
// has many n-grams but should not outvote the words around it.
func lexical(feats []feature, p *params, w weigher, out []float32) {
	var norm [numKinds]float64
	var weight [numKinds]float64
	weight[kindWord], weight[kindBigram], weight[kindChar] = p.WordWeight, p.BigramWeight, p.CharWeight
	val := func(x *feature) float64 {
		v := sublinearTF(x.tf)
		if w != nil {
			v *= w.idf(x.h)
		}
		if x.stop {
			v *= p.StopWeight
		}
		return v
	}
	var buf [512]float64
	vals := buf[:0]
	if len(feats) > len(buf) {
		// Most texts of a few sentences have more features than that
		// (character n-grams): a rebuild at 100,000 entries allocated
		// 2 GB here before the room was kept.
		vp := valsPool.Get().(*[]float64)
		defer valsPool.Put(vp)
		*vp = slices.Grow((*vp)[:0], len(feats))
		vals = *vp
	}
	for i := range feats {
		v := val(&feats[i])
		vals = append(vals, v)
		norm[feats[i].kind] += v * v
	}
	for k := range norm {
		if norm[k] > 0 {
			norm[k] = weight[k] / math.Sqrt(norm[k])
		}
	}
	dim := uint64(len(out))
	for i := range feats {
		x := &feats[i]
		v := vals[i] * norm[x.kind]
		if v == 0 {
			continue
		}
		j := (x.h >> keyBits) % dim
		if x.h>>63 != 0 {
			v = -v
		}
		out[j] += float32(v)
	}
}

// normalize scales v to unit length in place; a zero vector stays zero.
func normalize(v []float32) {
	var s float64
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	if s == 0 {
		return
	}
	inv := 1 / math.Sqrt(s)
	for i := range v {
		v[i] = float32(float64(v[i]) * inv)
	}
}
