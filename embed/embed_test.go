package embed

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/miramem/mira/internal/text"
)

func TestStem(t *testing.T) {
	tests := []struct{ in, want string }{
		{"caresses", "caress"}, {"ponies", "poni"}, {"cats", "cat"}, {"feed", "feed"},
		{"agreed", "agre"}, {"plastered", "plaster"}, {"motoring", "motor"}, {"sing", "sing"},
		{"conflated", "conflat"}, {"troubled", "troubl"}, {"sized", "size"}, {"hopping", "hop"},
		{"falling", "fall"}, {"hissing", "hiss"}, {"filing", "file"}, {"happy", "happi"},
		{"relational", "relat"}, {"generalization", "gener"}, {"adoption", "adopt"},
		{"running", "run"}, {"painting", "paint"}, {"paints", "paint"}, {"hiking", "hike"},
		{"camping", "camp"}, {"camped", "camp"}, {"electricity", "electr"}, {"hopeful", "hope"},
		{"goodness", "good"}, {"controll", "control"}, {"roll", "roll"}, {"a", "a"}, {"is", "is"},
		{"2023", "2023"}, {"café", "café"},
	}
	for _, tt := range tests {
		if got := text.Stem(tt.in); got != tt.want {
			t.Errorf("stem(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestTokenize(t *testing.T) {
	tests := []struct {
		in   string
		want []string // stems, stop words marked with a leading "-"
	}{
		{"Caroline: I went to a LGBTQ support group!", []string{"carolin", "-i", "went", "-to", "-a", "lgbtq", "support", "group"}},
		{"Caroline's car isn't red", []string{"carolin", "car", "not", "red"}},
		{"It’s 5pm—don't panic", []string{"-it", "5pm", "not", "panic"}},
		{"Café CRÈME, naïve", []string{"café", "crème", "naïve"}},
		{"", nil},
		{"  ...!  ", nil},
	}
	for _, tt := range tests {
		var got []string
		for _, tok := range tokenize(tt.in) {
			s := tok.stem
			if tok.stop {
				s = "-" + s
			}
			got = append(got, s)
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("tokenize(%q) diff (-want +got):\n%s", tt.in, diff)
		}
	}
}

// corpus returns n deterministic synthetic texts of about words words:
// pseudo-words drawn from a Zipf-like distribution, each text leaning on
// one of a few hundred topics, a third of the words stop words.
func corpus(n, words int) []string {
	const vocab, topics = 20000, 300
	syll := []string{"ka", "lo", "mi", "ne", "ru", "sa", "ti", "vo", "ze", "pa", "qui", "dor", "len", "bar", "tos", "fy"}
	word := func(i int) string {
		var b strings.Builder
		for x := i + 1; x > 0; x /= len(syll) {
			b.WriteString(syll[x%len(syll)])
		}
		return b.String()
	}
	stops := []string{"the", "a", "and", "I", "to", "it", "was", "we", "so", "my", "of", "in"}
	state := uint64(42)
	next := func() uint64 { state += 0x9e3779b97f4a7c15; return mix(state) }
	zipf := func(m int) int { // P(i) ~ 1/(i+1), by inverse transform
		u := float64(next()>>11) / (1 << 53)
		return min(int(math.Exp(u*math.Log(float64(m+1))))-1, m-1)
	}
	out := make([]string, n)
	for i := range out {
		topic := int(next() % topics)
		var b strings.Builder
		fmt.Fprintf(&b, "Speaker%d:", i%2)
		for j := 0; j < words; j++ {
			b.WriteByte(' ')
			switch r := next() % 3; {
			case r == 0:
				b.WriteString(stops[next()%uint64(len(stops))])
			case r == 1:
				b.WriteString(word(topic*60 + zipf(60))) // the topic's own words
			default:
				b.WriteString(word(zipf(vocab)))
			}
		}
		b.WriteByte('.')
		out[i] = b.String()
	}
	return out
}

// firstDiff returns the index of the first vector that differs bit for
// bit between a and b, or -1 (cmp.Diff is far too slow for this).
func firstDiff(a, b [][]float32) int {
	if len(a) != len(b) {
		return 0
	}
	for i := range a {
		if len(a[i]) != len(b[i]) {
			return i
		}
		for j := range a[i] {
			if math.Float32bits(a[i][j]) != math.Float32bits(b[i][j]) {
				return i
			}
		}
	}
	return -1
}

func norm(v []float32) float64 {
	var s float64
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	return math.Sqrt(s)
}

func cosine(a, b []float32) float64 {
	return float64(dot(a, b)) / (norm(a) * norm(b))
}

func embedOne(t *testing.T, e Embedder, text string) []float32 {
	t.Helper()
	v, err := e.Embed(context.Background(), []string{text})
	if err != nil {
		t.Fatalf("Embed(%q): %v", text, err)
	}
	return v[0]
}

func fitT(t *testing.T, texts []string, o FitOptions) *Model {
	t.Helper()
	m, err := Fit(texts, o)
	if err != nil {
		t.Fatalf("Fit(%d texts, %+v): %v", len(texts), o, err)
	}
	return m
}

func modelBytes(t *testing.T, m *Model) []byte {
	t.Helper()
	var buf bytes.Buffer
	n, err := m.WriteTo(&buf)
	if err != nil || n != int64(buf.Len()) {
		t.Fatalf("WriteTo = %d, %v; wrote %d bytes", n, err, buf.Len())
	}
	return buf.Bytes()
}

func TestDimensionAndUnitNorm(t *testing.T) {
	texts := append(corpus(300, 30), "", "the and of", "Ünïcödé wörds", "x")
	m := fitT(t, corpus(500, 30), FitOptions{})
	for _, e := range []Embedder{NewHashing(0), NewHashing(100), m} {
		vecs, err := e.Embed(context.Background(), texts)
		if err != nil {
			t.Fatalf("%s: Embed: %v", e.ID(), err)
		}
		if len(vecs) != len(texts) {
			t.Fatalf("%s: Embed returned %d vectors for %d texts", e.ID(), len(vecs), len(texts))
		}
		for i, v := range vecs {
			if len(v) != e.Dim() {
				t.Errorf("%s: len(vector %d) = %d, want %d", e.ID(), i, len(v), e.Dim())
			}
			want := 1.0
			if strings.TrimFunc(texts[i], func(r rune) bool { return !('a' <= r && r <= 'z' || r >= 0x80) }) == "" {
				want = 0 // no words: the zero vector
			}
			if n := norm(v); math.Abs(n-want) > 1e-5 {
				t.Errorf("%s: |Embed(%q)| = %v, want %v", e.ID(), texts[i], n, want)
			}
		}
	}
	if got, want := NewHashing(0).Dim(), DefaultHashDim; got != want {
		t.Errorf("NewHashing(0).Dim() = %d, want %d", got, want)
	}
	if got, want := NewHashing(100).ID(), "mira-hash-v1/100"; got != want {
		t.Errorf("NewHashing(100).ID() = %q, want %q", got, want)
	}
	if m.Dim() != defaultDim {
		t.Errorf("default model Dim() = %d, want %d", m.Dim(), defaultDim)
	}
}

func TestAdaptiveLearnedDimension(t *testing.T) {
	tests := []struct{ n, dim, want int }{
		{1, 384, 2}, {12, 384, 3}, {40, 384, 8}, {200, 384, 48}, {570, 384, 120},
		{3435, 384, 256}, {100000, 384, 256}, {3435, 1024, 448},
	}
	for _, tt := range tests {
		if got := (FitOptions{Dim: tt.dim}).withDefaults(tt.n).SemDim; got != tt.want {
			t.Errorf("learned dimension for %d texts, Dim %d = %d, want %d", tt.n, tt.dim, got, tt.want)
		}
	}
}

// TestDeterminism checks that the same texts in the same order give
// bit-identical models and vectors, whatever the parallelism.
func TestDeterminism(t *testing.T) {
	// Enough texts for every parallel path (several chunks of rows); a
	// small Dim keeps the fit quick.
	texts := corpus(3000, 15)
	queries := corpus(600, 8)
	m1 := fitT(t, texts, FitOptions{Dim: 200, Workers: 1})
	m2 := fitT(t, texts, FitOptions{Dim: 200, Workers: 3})
	m3 := fitT(t, texts, FitOptions{Dim: 200})
	b1 := modelBytes(t, m1)
	if !bytes.Equal(b1, modelBytes(t, m2)) || !bytes.Equal(b1, modelBytes(t, m3)) {
		t.Fatal("models fitted on the same texts with different worker counts differ")
	}
	if m1.ID() != m2.ID() {
		t.Errorf("IDs differ: %s, %s", m1.ID(), m2.ID())
	}
	ctx := context.Background()
	for _, e := range []Embedder{NewHashing(0), m1} {
		var runs [][][]float32
		for _, procs := range []int{1, 2, 5} {
			old := runtime.GOMAXPROCS(procs)
			v, err := e.Embed(ctx, queries)
			runtime.GOMAXPROCS(old)
			if err != nil {
				t.Fatal(err)
			}
			runs = append(runs, v)
		}
		for i := 1; i < len(runs); i++ {
			if d := firstDiff(runs[0], runs[i]); d >= 0 {
				t.Errorf("%s: vector %d differs between runs with different GOMAXPROCS", e.ID(), d)
			}
		}
	}
	s1, err := m1.EmbedSequence(ctx, queries)
	if err != nil {
		t.Fatal(err)
	}
	s2, err := m2.EmbedSequence(ctx, queries)
	if err != nil {
		t.Fatal(err)
	}
	if d := firstDiff(s1, s2); d >= 0 {
		t.Errorf("EmbedSequence: vector %d differs between equal models", d)
	}
}

func TestModelRoundTrip(t *testing.T) {
	texts := corpus(800, 25)
	m := fitT(t, texts, FitOptions{})
	data := modelBytes(t, m)
	r, err := ReadModel(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("ReadModel: %v", err)
	}
	if r.ID() != m.ID() || r.Dim() != m.Dim() || r.Docs() != m.Docs() || r.Terms() != m.Terms() {
		t.Errorf("read model = %s dim %d docs %d terms %d, want %s dim %d docs %d terms %d",
			r.ID(), r.Dim(), r.Docs(), r.Terms(), m.ID(), m.Dim(), m.Docs(), m.Terms())
	}
	if !bytes.Equal(data, modelBytes(t, r)) {
		t.Error("WriteTo of the read model differs from the original file")
	}
	ctx := context.Background()
	want, err := m.EmbedSequence(ctx, texts[:100])
	if err != nil {
		t.Fatal(err)
	}
	got, err := r.EmbedSequence(ctx, texts[:100])
	if err != nil {
		t.Fatal(err)
	}
	if d := firstDiff(want, got); d >= 0 {
		t.Errorf("vector %d of the read model differs", d)
	}
	if !strings.HasPrefix(m.ID(), fmt.Sprintf("mira-lsa-v1/%d/", m.Dim())) || len(m.ID()) != len("mira-lsa-v1/384/")+12 {
		t.Errorf("ID() = %q, want mira-lsa-v1/%d/<12 hex digits>", m.ID(), m.Dim())
	}
}

func TestModelIDChangesWithTexts(t *testing.T) {
	texts := corpus(400, 20)
	a := fitT(t, texts, FitOptions{})
	b := fitT(t, append(texts[:len(texts):len(texts)], "one more memory about the garden"), FitOptions{})
	c := fitT(t, texts, FitOptions{SemDim: -1})
	if a.ID() == b.ID() || a.ID() == c.ID() || b.ID() == c.ID() {
		t.Errorf("IDs of different models collide: %s %s %s", a.ID(), b.ID(), c.ID())
	}
}

func TestReadModelDamaged(t *testing.T) {
	data := modelBytes(t, fitT(t, corpus(200, 20), FitOptions{}))
	flipped := bytes.Clone(data)
	flipped[len(flipped)/2] ^= 0x40
	tests := map[string][]byte{
		"empty":     nil,
		"truncated": data[:len(data)-1],
		"flipped":   flipped,
		"foreign":   []byte("MIRAEMB\x00 but then something else entirely, long enough to pass"),
		"extended":  append(bytes.Clone(data), 0),
	}
	for name, b := range tests {
		if _, err := ReadModel(bytes.NewReader(b)); !errors.Is(err, ErrBadModel) {
			t.Errorf("ReadModel(%s) error = %v, want ErrBadModel", name, err)
		}
	}
}

func FuzzReadModel(f *testing.F) {
	var buf bytes.Buffer
	m, err := Fit([]string{"a car is a vehicle", "the vehicle is fast", "music and guitar"}, FitOptions{})
	if err != nil {
		f.Fatal(err)
	}
	if _, err := m.WriteTo(&buf); err != nil {
		f.Fatal(err)
	}
	f.Add(buf.Bytes())
	f.Add([]byte(modelMagic))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := ReadModel(bytes.NewReader(data))
		if err != nil {
			return
		}
		v, err := m.Embed(context.Background(), []string{"a fast car"})
		if err != nil || len(v[0]) != m.Dim() {
			t.Fatalf("Embed on a model that was read = %v, %v", v, err)
		}
	})
}

// TestFittedConnectsWords is the point of fitting: "car" and "vehicle"
// share no letters, but the store's own texts use them in the same
// contexts, so the fitted embedder brings them together and the pure
// hashing one cannot.
func TestFittedConnectsWords(t *testing.T) {
	texts := []string{
		"I washed the car this morning before work.",
		"The vehicle needs new tires and an oil change.",
		"Parked the car in the garage, the tires look worn.",
		"Is the vehicle in the garage? It needs washing.",
		"We baked bread with rye flour in the new oven.",
		"The oven was too hot and the bread burned.",
		"Fresh flour makes better bread, and a slower oven.",
		"I practised guitar for an hour after dinner.",
		"The guitar needs new strings before the concert.",
		"Played the concert with the old guitar strings.",
		"My car broke down on the highway, engine trouble.",
		"The mechanic fixed the vehicle engine on the highway.",
	}
	m := fitT(t, texts, FitOptions{})
	h := NewHashing(0)
	pairs := []struct{ a, b string }{{"car", "vehicle"}, {"my car", "the vehicle"}}
	for _, p := range pairs {
		hc := cosine(embedOne(t, h, p.a), embedOne(t, h, p.b))
		mc := cosine(embedOne(t, m, p.a), embedOne(t, m, p.b))
		unrelated := cosine(embedOne(t, m, p.a), embedOne(t, m, "guitar"))
		if mc < hc+0.3 {
			t.Errorf("cos(%q, %q): fitted %.3f, hashing %.3f; want fitted at least 0.3 higher", p.a, p.b, mc, hc)
		}
		if mc < unrelated+0.3 {
			t.Errorf("fitted cos(%q, %q) = %.3f, cos(%q, guitar) = %.3f; want the related pair well ahead", p.a, p.b, mc, p.a, unrelated)
		}
	}
}

// TestEmbedSequence checks that in a sequence a text carries its
// neighbours' words, and that a window of 0 is Embed.
func TestEmbedSequence(t *testing.T) {
	texts := corpus(2000, 20)
	m := fitT(t, texts, FitOptions{Dim: 200})
	ctx := context.Background()
	// A new stream of texts the model has not seen in this order: its
	// learned vectors cannot know that these three follow each other.
	seqTexts := []string{texts[10], texts[500], texts[1500]}
	plain, err := m.Embed(ctx, seqTexts)
	if err != nil {
		t.Fatal(err)
	}
	w0, err := m.EmbedSequenceWindow(ctx, seqTexts, 0)
	if err != nil {
		t.Fatal(err)
	}
	if d := firstDiff(plain, w0); d >= 0 {
		t.Errorf("EmbedSequenceWindow(0): vector %d differs from Embed", d)
	}
	seq, err := m.EmbedSequence(ctx, seqTexts)
	if err != nil {
		t.Fatal(err)
	}
	q := plain[0] // a query that is the first text
	if got, alone := cosine(q, seq[1]), cosine(q, plain[1]); got < alone+0.2 {
		t.Errorf("cos(first text, second text) in sequence = %.3f, alone = %.3f; want the sequence well ahead", got, alone)
	}
	for i, v := range seq {
		if n := norm(v); math.Abs(n-1) > 1e-5 {
			t.Errorf("|EmbedSequence[%d]| = %v, want 1", i, n)
		}
	}
	// Sequences longer than one chunk agree with a chunk-free computation:
	// text i of a long sequence equals the middle of a window-sized one.
	long, err := m.EmbedSequence(ctx, texts[:1000])
	if err != nil {
		t.Fatal(err)
	}
	for _, i := range []int{2, 255, 256, 257, 511, 997} {
		short, err := m.EmbedSequence(ctx, texts[i-2:i+3])
		if err != nil {
			t.Fatal(err)
		}
		if d := firstDiff(long[i:i+1], short[2:3]); d >= 0 {
			t.Errorf("EmbedSequence: text %d differs with and without chunking", i)
		}
	}
}

func TestEmbedCanceled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	m := fitT(t, corpus(100, 10), FitOptions{})
	for _, e := range []Embedder{NewHashing(0), m} {
		if _, err := e.Embed(ctx, corpus(2000, 10)); !errors.Is(err, context.Canceled) {
			t.Errorf("%s: Embed with a canceled context: error = %v, want context.Canceled", e.ID(), err)
		}
	}
}

func TestFitErrors(t *testing.T) {
	tests := map[string]struct {
		texts []string
		o     FitOptions
	}{
		"no texts":      {nil, FitOptions{}},
		"dim too small": {[]string{"a b c"}, FitOptions{Dim: 64}},
		"sem too large": {[]string{"a b c"}, FitOptions{Dim: 100, SemDim: 100}},
	}
	for name, tt := range tests {
		if _, err := Fit(tt.texts, tt.o); err == nil {
			t.Errorf("Fit(%s) succeeded, want an error", name)
		}
	}
	// Degenerate but valid corpora fit.
	for _, texts := range [][]string{{""}, {"the and of"}, {"one"}, {"same text", "same text"}} {
		m := fitT(t, texts, FitOptions{})
		v := embedOne(t, m, "one text")
		if len(v) != m.Dim() {
			t.Errorf("Fit(%q): vector length %d, want %d", texts, len(v), m.Dim())
		}
	}
}

func TestSymEigen(t *testing.T) {
	// A random symmetric matrix: check g·v = λ·v for every pair and the
	// order of the eigenvalues.
	const n = 12
	g := newDense(n, n)
	state := uint64(7)
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			state += 0x9e3779b97f4a7c15
			x := float64(mix(state)>>11)/(1<<53) - 0.5
			g.v[i*n+j], g.v[j*n+i] = x, x
		}
	}
	vals, vecs := symEigen(g)
	for c := 0; c < n; c++ {
		if c > 0 && vals[c] > vals[c-1] {
			t.Errorf("eigenvalues not descending: %v", vals)
		}
		for i := 0; i < n; i++ {
			var s float64
			for j := 0; j < n; j++ {
				s += g.v[i*n+j] * vecs.v[j*n+c]
			}
			if d := math.Abs(s - vals[c]*vecs.v[i*n+c]); d > 1e-9 {
				t.Fatalf("(g·v%d)[%d] - λ·v = %g", c, i, d)
			}
		}
	}
}

func TestOrthonormalize(t *testing.T) {
	a := newTall(5000, 20)
	state := uint64(9)
	for i := range a.v {
		state += 0x9e3779b97f4a7c15
		a.v[i] = float32(float64(mix(state)>>11)/(1<<53) - 0.5)
	}
	// Make column 5 a copy of column 2: it must come out as zero.
	for r := 0; r < a.rows; r++ {
		a.v[r*a.cols+5] = a.v[r*a.cols+2]
	}
	a.orthonormalize(2, 2)
	g := a.cross(a, 2)
	for i := 0; i < a.cols; i++ {
		for j := 0; j < a.cols; j++ {
			want := 0.0
			if i == j && i != 5 {
				want = 1
			}
			if d := math.Abs(g.v[i*a.cols+j] - want); d > 1e-5 { // float32 storage
				t.Errorf("(qᵀq)[%d][%d] = %g, want %g", i, j, g.v[i*a.cols+j], want)
			}
		}
	}
}

func TestSample(t *testing.T) {
	texts := make([]string, 1000)
	for i := range texts {
		texts[i] = fmt.Sprint(i)
	}
	for _, tc := range []struct {
		limit, want int
	}{{0, 1000}, {1000, 1000}, {5000, 1000}, {600, 512}, {300, 256}, {100, 100}} {
		got := sample(texts, tc.limit)
		if len(got) != tc.want {
			t.Errorf("sample(1000 texts, %d) has %d texts, want %d", tc.limit, len(got), tc.want)
			continue
		}
		// Runs of run consecutive texts, in order, the first text and,
		// with more than one run, the last included.
		run := len(texts)
		if tc.limit > 0 && tc.limit < len(texts) {
			run = min(sampleRun, tc.limit)
		}
		for i, s := range got {
			if i%run == 0 {
				if i > 0 && atoi(t, s) <= atoi(t, got[i-1]) {
					t.Errorf("sample(1000 texts, %d)[%d] = %s after %s, want a later run", tc.limit, i, s, got[i-1])
				}
			} else if atoi(t, s) != atoi(t, got[i-1])+1 {
				t.Errorf("sample(1000 texts, %d)[%d] = %s after %s, want a run", tc.limit, i, s, got[i-1])
			}
		}
		if got[0] != "0" || len(got) > run && got[len(got)-1] != "999" {
			t.Errorf("sample(1000 texts, %d) spans %s…%s, want 0…999", tc.limit, got[0], got[len(got)-1])
		}
	}
}

func atoi(t *testing.T, s string) int {
	t.Helper()
	var n int
	if _, err := fmt.Sscan(s, &n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestFitSample checks that a bounded fit learns from the sample only:
// the same model as fitting the sampled texts themselves.
func TestFitSample(t *testing.T) {
	texts := corpus(3000, 20)
	m, err := Fit(texts, FitOptions{MaxTexts: 1024})
	if err != nil {
		t.Fatal(err)
	}
	want, err := Fit(sample(texts, 1024), FitOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if m.Docs() != 1024 || m.ID() != want.ID() {
		t.Errorf("Fit(3000 texts, MaxTexts 1024) = %s on %d texts, want %s on 1024", m.ID(), m.Docs(), want.ID())
	}
}

// TestSortKeys: sortKeys sorts as slices.Sort does, for keys spread as
// hashes are and for keys that crowd a few buckets or repeat.
func TestSortKeys(t *testing.T) {
	var fs featureSet
	r := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{0, 1, 63, 64, 65, 100, 1000, 5000, 70000} {
		for _, spread := range []string{"hashes", "crowded", "repeats"} {
			keys := make([]uint64, n)
			for i := range keys {
				switch spread {
				case "hashes":
					keys[i] = r.Uint64()
				case "crowded":
					keys[i] = r.Uint64() >> 40 // every key in the first bucket
				case "repeats":
					keys[i] = uint64(r.IntN(7)) << 61
				}
			}
			want := slices.Clone(keys)
			slices.Sort(want)
			fs.sortKeys(keys)
			if !slices.Equal(keys, want) {
				t.Fatalf("%d %s keys: not sorted as slices.Sort sorts them", n, spread)
			}
		}
	}
}

// TestTokenizeCached: a featureSet's tokens, its cache of words warm or
// cold, are tokenize's.
func TestTokenizeCached(t *testing.T) {
	texts := []string{
		"Caroline's dog didn't bark; the dogs were barking at Café Müller.",
		"the dogs were barking", "DON'T panic — don’t", "", "naïve naive NAÏVE 42 x42",
		"Caroline's dog didn't bark; the dogs were barking at Café Müller.",
	}
	var fs featureSet
	for round := range 2 {
		for _, text := range texts {
			if got, want := fs.tokenize(text), tokenize(text); !slices.Equal(got, want) {
				t.Fatalf("round %d, %q: %v, want %v", round, text, got, want)
			}
		}
	}
}

// The table of count weights gives what the logarithm gives, bit for bit:
// vectors must not change with how the weight is found.
func TestSublinearTF(t *testing.T) {
	for _, tf := range []float32{0, 1, 2, 3, 7, 63, 64, 65, 1000, 0.5, 2.25} {
		want := 1 + math.Log(float64(tf))
		if got := sublinearTF(tf); got != want && !(math.IsInf(got, -1) && math.IsInf(want, -1)) {
			t.Errorf("sublinearTF(%v) = %v, want %v", tf, got, want)
		}
	}
}
