package index

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/miramem/mira/embed"
	"github.com/miramem/mira/internal/atomicfile"
	"github.com/miramem/mira/internal/rawfile"
)

const (
	// MinFitDocs is the smallest store the built-in embedder fits a model
	// for. A model learns word vectors from the store's own texts, which
	// needs a few hundred of them (LoCoMo's conversations of 370–680 turns
	// gain a lot); below this the hashing embedder, which needs no fit,
	// serves, and the first Open that finds this many entries refits.
	MinFitDocs = 100
	// RefitGrowth is how much a store may grow beyond the size its model
	// was fitted on before Open refits: a model knows no word it was not
	// fitted on (new words are matched by the hashed lexical block only)
	// and its word statistics drift. Refitting at each doubling keeps the
	// total work of all refits within twice that of the last one.
	RefitGrowth = 2
	// FitMaxTexts is the most texts the built-in model is fitted on; a
	// larger store is sampled (embed.FitOptions.MaxTexts), and every
	// text is still embedded. Fitting on all 100,000 texts of a generated
	// store took as long as indexing them; LoCoMo's 3,435 turns, and
	// any store below this, are fitted on whole.
	FitMaxTexts = 25000
	// modelName is the fitted model's file in a generation.
	modelName = "model"
	// embedChunk is how many texts one embedding call gets while
	// rebuilding: progress is reported and cancellation checked between.
	embedChunk = 1024
	// seqHalo is how many neighbours on each side a chunk of a sequence is
	// embedded with, so that chunking changes no vector: more than the
	// model's context window (two texts each side by default).
	seqHalo = 16
	// pendingRetry is how long entries whose embedding failed wait before
	// an Open with nothing else to do tries them again.
	pendingRetry = time.Minute
	// compactMin and compactShare decide when the vector log is folded
	// into a new base file: when it holds more records than compactMin
	// and than compactShare times the live rows. Appending costs the size
	// of the change; compacting costs the whole store (about a second for
	// 100,000 × 384 dimensions), so the log is allowed to grow with it.
	compactMin   = 256
	compactShare = 0.125
)

// vecInput is a loaded document on its way into the vector store.
type vecInput struct {
	vecDoc
	text string
}

func newVecInput(d Doc, lx lexed) vecInput {
	return vecInput{vecDoc: vecDoc{
		path: d.Path, id: d.ID, kind: d.Kind, scope: d.Scope, project: d.Project,
		role: d.Role, pin: d.Pin,
		tags: d.Tags, created: d.CreatedAt, hash: hashText(d.Text), content: d.Hash,
		terms: lx.terms, flen: lx.flen, lsum: lx.lsum, from: d.From,
	}, text: d.Text}
}

// storeOrder sorts documents as the built-in model wants its texts: by
// scope, then creation time, then path.
func storeOrder(a, b *vecDoc) int {
	return cmp.Or(strings.Compare(a.scope, b.scope), a.created.Compare(b.created), strings.Compare(a.path, b.path))
}

// prober is an embedder that learns its dimension (and so its final ID)
// from the server it talks to.
type prober interface {
	Probe(ctx context.Context) (int, error)
}

// ctx is the call's context.
func (c *call) ctx() context.Context {
	if c.opt.Context != nil {
		return c.opt.Context
	}
	return context.Background()
}

// configuredID returns the ID of Options.Embedder, probing the embedder
// once per call if it does not know its dimension yet; "" for the built-in
// default.
func (c *call) configuredID() (string, error) {
	e := c.opt.Embedder
	if e == nil {
		return "", nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e.Dim() == 0 && c.probeErr == nil {
		if p, ok := e.(prober); ok {
			if _, err := p.Probe(c.ctx()); err != nil {
				c.probeErr = err
			}
		}
	}
	if c.probeErr != nil {
		return "", c.probeErr
	}
	return e.ID(), nil
}

// outdated says a generation is sound but must be replaced: its vectors
// come from another embedder than the configured one, or its model was
// fitted on a much smaller store.
func outdated(format string, args ...any) error {
	return &damagedError{outdated: true, err: fmt.Errorf(format, args...)}
}

// checkEmbedder returns an outdated error when the generation's vectors do
// not come from the configured embedder. An external embedder that cannot
// tell its ID (its server does not answer) is given the benefit of the
// doubt: the index stays, and what it cannot embed waits.
func (c *call) checkEmbedder(dir string, m meta) error {
	if c.opt.Embedder == nil {
		if !m.DefaultEmbedder {
			return outdated("its vectors are from %s, the built-in embedder is configured", m.Embedder)
		}
		return nil
	}
	id, err := c.configuredID()
	if err != nil {
		c.warn(dir, fmt.Errorf("embedder: %w", err))
		return nil
	}
	if id != m.Embedder {
		return outdated("its vectors are from %s, the configured embedder is %s", m.Embedder, id)
	}
	return nil
}

// refitDue reports whether the built-in embedder should be fitted again:
// the store has outgrown the hashing fallback, or RefitGrowth times the
// store the model was fitted on.
func (c *call) refitDue(m meta) bool {
	if c.opt.Embedder != nil || !m.DefaultEmbedder {
		return false
	}
	if m.FitDocs == 0 {
		return m.Docs >= MinFitDocs
	}
	return m.Docs >= RefitGrowth*m.FitDocs
}

// cached reports whether an embedder's vectors are worth caching: every
// embedder but the built-in ones, which compute a vector in microseconds.
func cached(e embed.Embedder) bool {
	switch e.(type) {
	case *embed.Hashing, *embed.Model:
		return false
	}
	return true
}

// genEmbedder returns the embedder of a generation's vectors, for new
// documents and for queries: the built-in model read from the generation,
// the hashing fallback, or the configured embedder if it is the one the
// vectors came from. Nil means none can be had (the configured embedder
// is another one); the index then searches by words only.
func (c *call) genEmbedder(genDir string, m meta) (embed.Embedder, *embed.Model, error) {
	if m.DefaultEmbedder {
		if m.FitDocs == 0 {
			h := embed.NewHashing(embed.DefaultHashDim)
			if h.ID() != m.Embedder {
				return nil, nil, damaged("vectors of %s, the hashing embedder is %s", m.Embedder, h.ID())
			}
			return h, nil, nil
		}
		f, err := rawfile.Open(filepath.Join(genDir, modelName))
		if err != nil {
			return nil, nil, damaged("embedding model: %w", err)
		}
		defer f.Close()
		model, err := embed.ReadModel(f)
		if err != nil {
			return nil, nil, damaged("embedding model: %w", err)
		}
		if model.ID() != m.Embedder {
			return nil, nil, damaged("embedding model %s, the meta says %s", model.ID(), m.Embedder)
		}
		return model, model, nil
	}
	if e := c.opt.Embedder; e != nil {
		if id, err := c.configuredID(); err != nil || id == m.Embedder {
			// An embedder that cannot tell its ID now is checked again
			// after it embeds (see embedDocs).
			return e, nil, nil
		}
	}
	return nil, nil, nil
}

// vecMeta is what the vectors add to a generation's meta.
type vecMeta struct {
	embedder        string
	dim             int
	defaultEmbedder bool
	fitDocs         int
	vectors         int
	pending         int
}

// buildVectors embeds every document of a new generation and writes its
// vector files (and the fitted model, for the built-in embedder).
func (c *call) buildVectors(indexDir, genDir string, docs []vecInput) (vecMeta, error) {
	byPath := storeSort(docs)
	// The base file's rows and its postings section need everything of
	// the documents but their vectors: they are laid out while the model
	// is fitted and the documents embedded, which leave a core idle about
	// a fifth of the time, in the file's order (by path).
	out := make([]*vecDoc, len(docs))
	for i, d := range byPath {
		out[i] = &docs[d].vecDoc
	}
	layout := layBase(out)
	var (
		vm    vecMeta
		e     embed.Embedder
		model *embed.Model
	)
	switch {
	case c.opt.Embedder != nil:
		e = c.opt.Embedder
		// Learn its dimension first, to look in its cache; if its
		// server does not answer, embedding fails below and says so.
		_, _ = c.configuredID()
	case len(docs) >= MinFitDocs:
		texts := make([]string, len(docs))
		for i := range docs {
			texts[i] = docs[i].text
		}
		var err error
		if model, err = embed.Fit(texts, embed.FitOptions{MaxTexts: FitMaxTexts}); err != nil {
			return vm, fmt.Errorf("fit embedding model: %w", err)
		}
		err = atomicfile.WriteWith(filepath.Join(genDir, modelName), 0o600, true, func(w io.Writer) error {
			_, err := model.WriteTo(w)
			return err
		})
		if err != nil {
			return vm, err
		}
		e, vm.fitDocs, vm.defaultEmbedder = model, len(docs), true
	default:
		e, vm.defaultEmbedder = embed.NewHashing(embed.DefaultHashDim), true
	}
	base, _ := vecFiles(genDir, 1)
	// The vectors go straight to their places in the base file as they
	// are made, in the order they are made (the store's); where the
	// system cannot make a file without a name, or the embedder does not
	// know its dimension yet, to a spill file, and from there into the
	// base file in its order (by path). At a million documents they are
	// 1.5 GB.
	place, err := newVecPlacer(genDir, e.Dim(), e.ID(), byPath, layout)
	if err == nil {
		defer place.close()
		failed, err := c.embedInto(indexDir, e, model, docs, nil, true, place.put)
		if err != nil {
			return vm, err
		}
		vm.embedder, vm.dim = e.ID(), e.Dim()
		if vm.dim != place.dim && place.n > 0 {
			place.badDim = place.dim
		}
		if place.badDim >= 0 || vm.dim != place.dim {
			return vm, fmt.Errorf("embedder %s gave %d dimensions, want %d", vm.embedder, max(place.badDim, 0), vm.dim)
		}
		vm.mark(out, func(row int) bool { return place.have[row] }, failed)
		if err := place.finish(base, vm.embedder, out); err != nil {
			return vm, err
		}
		c.compactCache(indexDir, e, vm, docs)
		return vm, nil
	} else if !errors.Is(err, errNoPlacer) {
		return vm, err
	}
	spill, err := newVecSpill(genDir, e.Dim(), len(docs))
	if err != nil {
		return vm, err
	}
	defer spill.close()
	failed, err := c.embedInto(indexDir, e, model, docs, nil, true, spill.put)
	if err != nil {
		return vm, err
	}
	vm.embedder, vm.dim = e.ID(), e.Dim()
	if spill.n > 0 && spill.dim != vm.dim {
		spill.badDim = spill.dim
	}
	if spill.badDim >= 0 {
		return vm, fmt.Errorf("embedder %s gave %d dimensions, want %d", vm.embedder, spill.badDim, vm.dim)
	}
	order := make([]int32, len(byPath))
	for i, d := range byPath {
		order[i] = int32(d)
	}
	vm.mark(out, func(row int) bool { return spill.slot[byPath[row]] >= 0 }, failed)
	if err := writeVecFileFrom(base, vm.embedder, vm.dim, out, layout, spill.reader(order)); err != nil {
		return vm, err
	}
	c.compactCache(indexDir, e, vm, docs)
	return vm, nil
}

// storeSort sorts docs in store order and returns their indexes in path
// order (row i of the base file is docs[byPath[i]]). The documents are
// sorted by index and then each is moved once: sorted in place, the
// million documents of 320 bytes each were swapped about twenty million
// times, 3 s of a rebuild.
func storeSort(docs []vecInput) (byPath []int) {
	n := len(docs)
	byStore := make([]int32, n)
	byPath = make([]int, n)
	for i := range n {
		byStore[i], byPath[i] = int32(i), i
	}
	slices.SortFunc(byStore, func(a, b int32) int { return storeOrder(&docs[a].vecDoc, &docs[b].vecDoc) })
	// A rebuild loads its documents about in path order: this sort finds
	// little to do.
	slices.SortFunc(byPath, func(a, b int) int { return strings.Compare(docs[a].path, docs[b].path) })
	pos := make([]int32, n) // where each document goes
	for i, d := range byStore {
		pos[d] = int32(i)
	}
	byStore = nil
	for i, d := range byPath {
		byPath[i] = int(pos[d])
	}
	for i := range n {
		for int(pos[i]) != i {
			j := pos[i]
			docs[i], docs[j] = docs[j], docs[i]
			pos[i], pos[j] = pos[j], pos[i]
		}
	}
	return byPath
}

// mark counts the rows of out (a base file's, in path order) that have
// a vector and marks those without one pending when the embedder failed.
func (vm *vecMeta) mark(out []*vecDoc, has func(row int) bool, failed bool) {
	for i := range out {
		out[i].pending = !has(i) && failed
		if has(i) {
			vm.vectors++
		}
		if out[i].pending {
			vm.pending++
		}
	}
}

// compactCache keeps, in a cached embedder's cache, the vectors of docs
// alone, once a rebuild has embedded them.
func (c *call) compactCache(indexDir string, e embed.Embedder, vm vecMeta, docs []vecInput) {
	if cached(e) && vm.dim > 0 {
		keep := make(map[textHash]bool, len(docs))
		for i := range docs {
			keep[docs[i].hash] = true
		}
		if err := openVCache(indexDir, vm.embedder, vm.dim).compact(keep); err != nil {
			c.warn(indexDir, err)
		}
	}
}

// embedDocs returns the vectors of docs (in store order), nil for a text
// without words and for those the embedder failed on (then failed is true
// and the failure has been reported). With a model, documents that are
// neighbours in the store are embedded as a sequence: each scope's
// documents when runs is nil (a rebuild), else the given runs of indexes
// into docs (see findRuns). Vectors of a cached embedder are looked up in
// the cache first, and what it embeds is added.
func (c *call) embedDocs(indexDir string, e embed.Embedder, model *embed.Model, docs []vecInput, runs [][]int) (out [][]float32, failed bool, err error) {
	out = make([][]float32, len(docs))
	failed, err = c.embedInto(indexDir, e, model, docs, runs, false, func(i int, v []float32) error {
		out[i] = v
		return nil
	})
	if err != nil {
		return nil, false, err
	}
	return out, failed, nil
}

// embedInto is embedDocs handing each vector to keep as it is made (nil:
// none, see embedDocs) instead of returning them all: a rebuild writes
// them out as they come, so that a million documents' vectors are never
// in memory at once. With drop, a text is let go (docs[i].text = "") once
// its vector and its neighbours' are made. Vectors of a cached embedder are gathered for the
// cache and handed over at the end.
func (c *call) embedInto(indexDir string, e embed.Embedder, model *embed.Model, docs []vecInput, runs [][]int, drop bool, keep func(i int, v []float32) error) (failed bool, err error) {
	if len(docs) == 0 {
		return false, nil
	}
	ctx := c.ctx()
	var (
		cache *vcache
		out   [][]float32 // a cached embedder's vectors, for the cache
	)
	todo := make([]int, 0, len(docs))
	if cached(e) {
		out = make([][]float32, len(docs))
		if dim := e.Dim(); dim > 0 {
			cache = openVCache(indexDir, e.ID(), dim)
			hashes := make([]textHash, len(docs))
			for i := range docs {
				hashes[i] = docs[i].hash
			}
			got, err := cache.get(hashes)
			if err != nil {
				c.warn(indexDir, err)
			}
			for i, v := range got {
				out[i] = v
			}
		}
		for i := range docs {
			if out[i] == nil {
				todo = append(todo, i)
			}
		}
	} else {
		for i := range docs {
			todo = append(todo, i)
		}
	}
	c.cached += len(docs) - len(todo)
	report := len(todo) >= parallelLoad
	if report {
		c.progress(0, len(todo))
	}
	done := 0
	embedGroup := func(idx []int, seq bool) error {
		texts := make([]string, len(idx))
		for j, i := range idx {
			texts[j] = docs[i].text
		}
		got := func(lo int, vecs [][]float32) error {
			for j, v := range vecs {
				i := idx[lo+j]
				// Stored unit length, a dot product is the cosine; a
				// zero vector (a text without words) has no direction.
				if len(v) == 0 || !normalize(v) {
					v = nil
				}
				if out != nil {
					out[i] = v
				} else if err := keep(i, v); err != nil {
					return err
				}
			}
			if drop && out == nil {
				// Its neighbours embedded, a text is needed no more.
				for j := lo + len(vecs) - seqHalo - 1; j >= 0 && texts[j] != ""; j-- {
					texts[j], docs[idx[j]].text = "", ""
				}
			}
			if report {
				c.progress(done+lo+len(vecs), len(todo))
			}
			return nil
		}
		var err error
		if seq && model != nil {
			err = embedSequence(ctx, model, texts, got)
		} else {
			err = embedChunked(ctx, e, texts, got)
		}
		if err != nil {
			return err
		}
		done += len(idx)
		return nil
	}
	switch {
	case model != nil && runs == nil:
		// One sequence per scope: a scope's last text is no context for
		// the next scope's first.
		for lo := 0; lo < len(todo) && err == nil; {
			hi := lo + 1
			for hi < len(todo) && docs[todo[hi]].scope == docs[todo[lo]].scope {
				hi++
			}
			err = embedGroup(todo[lo:hi], true)
			lo = hi
		}
	case model != nil:
		var singles []int
		for _, run := range runs {
			if len(run) == 1 {
				singles = append(singles, run[0])
			} else if err == nil {
				err = embedGroup(run, true)
			}
		}
		if err == nil {
			err = embedGroup(singles, false)
		}
	default:
		err = embedGroup(todo, false)
	}
	if err != nil {
		if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) || !cached(e) {
			return false, fmt.Errorf("embed: %w", err)
		}
		// An external embedder failed (its server is down, a quota ran
		// out): the documents are searched by words until it works.
		for _, i := range todo {
			out[i] = nil
		}
		c.warn(indexDir, fmt.Errorf("embedding %d entries failed, they are found by words only until it works: %w", len(todo), err))
		for i, v := range out {
			if err := keep(i, v); err != nil {
				return false, err
			}
		}
		return true, nil
	}
	c.embedded += len(todo)
	if report {
		c.progress(len(todo), len(todo))
	}
	if cache == nil && cached(e) && e.Dim() > 0 {
		cache = openVCache(indexDir, e.ID(), e.Dim())
	}
	if cache != nil && len(todo) > 0 {
		hashes := make([]textHash, 0, len(todo))
		vecs := make([][]float32, 0, len(todo))
		for _, i := range todo {
			if out[i] != nil {
				hashes = append(hashes, docs[i].hash)
				vecs = append(vecs, out[i])
			}
		}
		if err := cache.put(hashes, vecs); err != nil {
			c.warn(indexDir, err)
		}
	}
	for i, v := range out {
		if err := keep(i, v); err != nil {
			return false, err
		}
	}
	return false, nil
}

// embedChunked embeds texts embedChunk at a time, handing each chunk's
// vectors to got with the index of its first text.
func embedChunked(ctx context.Context, e embed.Embedder, texts []string, got func(lo int, vecs [][]float32) error) error {
	for lo := 0; lo < len(texts); lo += embedChunk {
		hi := min(lo+embedChunk, len(texts))
		vecs, err := e.Embed(ctx, texts[lo:hi])
		if err != nil {
			return err
		}
		if len(vecs) != hi-lo {
			return fmt.Errorf("embedder %s returned %d vectors for %d texts", e.ID(), len(vecs), hi-lo)
		}
		if err := got(lo, vecs); err != nil {
			return err
		}
	}
	return nil
}

// embedSequence embeds texts as one sequence, embedChunk at a time, each
// chunk with seqHalo neighbours on either side so that every text sees the
// same context as in one call, handing each chunk's vectors to got with
// the index of its first text.
//
// Got runs on a goroutine of its own, one chunk behind the embedding, and
// one call at a time: while it placed a chunk's vectors (a rebuild writes
// them to their file) a core had nothing to do, a fifth of the time the
// vectors of a million entries took. Got may let go of the texts it is
// handed vectors for, but not of the seqHalo texts before the next chunk.
func embedSequence(ctx context.Context, m *embed.Model, texts []string, got func(lo int, vecs [][]float32) error) error {
	type chunk struct {
		lo   int
		vecs [][]float32
	}
	chunks := make(chan chunk, 1)
	stop := make(chan struct{}) // got failed: embed no more
	done := make(chan error, 1)
	go func() {
		var err error
		for c := range chunks {
			if err != nil {
				continue
			}
			if err = got(c.lo, c.vecs); err != nil {
				close(stop)
			}
		}
		done <- err
	}()
	var err error
embed:
	for lo := 0; lo < len(texts); lo += embedChunk {
		hi := min(lo+embedChunk, len(texts))
		from, to := max(lo-seqHalo, 0), min(hi+seqHalo, len(texts))
		var vecs [][]float32
		if vecs, err = m.EmbedSequence(ctx, texts[from:to]); err != nil {
			break
		}
		select {
		case chunks <- chunk{lo, vecs[lo-from : hi-from]}:
		case <-stop:
			break embed
		}
	}
	close(chunks)
	if gerr := <-done; gerr != nil {
		return gerr
	}
	return err
}

// smallUpdate is the most documents findRuns handles by scanning the rows
// once per pair of them instead of sorting the store: the watcher's
// batches of a few documents each cost a sort of every row at 100,000
// entries (about 0.2 s of CPU) before.
const smallUpdate = 16

// findRunsScan is findRuns for a few documents: whether a live document
// of the store lies between two of them is a scan of the rows.
func findRunsScan(vs *vecStore, docs []vecInput, changed map[string]bool) [][]int {
	between := func(prev, cur *vecDoc) bool {
		if vs == nil || prev.scope != cur.scope {
			return false
		}
		scope, ok := vs.dictIx[prev.scope]
		if !ok {
			return false
		}
		for i := range vs.rows {
			r := &vs.rows[i]
			if r.dead || r.scope != scope || changed[r.path] {
				continue
			}
			o := vecDoc{path: r.path, scope: prev.scope}
			if r.hasCreated {
				o.created = time.Unix(0, r.created)
			}
			if storeOrder(prev, &o) < 0 && storeOrder(&o, cur) < 0 {
				return true
			}
		}
		return false
	}
	var runs [][]int
	run := []int{0}
	for i := 1; i < len(docs); i++ {
		prev, cur := &docs[i-1].vecDoc, &docs[i].vecDoc
		if prev.scope != cur.scope || between(prev, cur) {
			runs = append(runs, run)
			run = nil
		}
		run = append(run, i)
	}
	return append(runs, run)
}

// findRuns groups the documents of an update (sorted in store order) into
// runs of neighbours: documents of one scope between which the store holds
// no other live document. Only a run is embedded as a sequence: a new
// entry's neighbours already in the store are not read again, so a lone
// entry is embedded on its own.
func findRuns(vs *vecStore, docs []vecInput) [][]int {
	if len(docs) == 0 {
		return nil
	}
	changed := make(map[string]bool, len(docs))
	scopes := map[string]bool{}
	for i := range docs {
		changed[docs[i].path] = true
		scopes[docs[i].scope] = true
	}
	if len(docs) <= smallUpdate {
		return findRunsScan(vs, docs, changed)
	}
	return findRunsSorted(vs, docs, changed, scopes)
}

// findRunsSorted is findRuns for many documents: the other live documents
// of their scopes are sorted once.
func findRunsSorted(vs *vecStore, docs []vecInput, changed, scopes map[string]bool) [][]int {
	// The other live documents of the scopes concerned, in store order.
	var others []vecDoc
	if vs != nil {
		for i := range vs.rows {
			r := &vs.rows[i]
			if r.dead || changed[r.path] || !scopes[vs.dict[r.scope]] {
				continue
			}
			d := vecDoc{path: r.path, scope: vs.dict[r.scope]}
			if r.hasCreated {
				d.created = time.Unix(0, r.created)
			}
			others = append(others, d)
		}
	}
	slices.SortFunc(others, func(a, b vecDoc) int { return storeOrder(&a, &b) })
	var runs [][]int
	run := []int{0}
	for i := 1; i < len(docs); i++ {
		prev, cur := &docs[i-1].vecDoc, &docs[i].vecDoc
		between := false
		if prev.scope == cur.scope {
			// Is there another document after prev and before cur?
			j, _ := slices.BinarySearchFunc(others, *prev, func(o vecDoc, t vecDoc) int { return storeOrder(&o, &t) })
			between = j < len(others) && storeOrder(&others[j], cur) < 0
		}
		if prev.scope != cur.scope || between {
			runs = append(runs, run)
			run = nil
		}
		run = append(run, i)
	}
	return append(runs, run)
}

// updateVectors applies an update's documents and removals to the
// generation's vectors: embeds what was loaded, appends the changes to the
// log, and folds the log into a new base file when it has grown. It
// returns the meta to write.
func (c *call) updateVectors(indexDir, genDir string, m meta, added []vecInput, removed []string) (meta, int, error) {
	if len(added) == 0 && len(removed) == 0 {
		return m, m.Docs, nil
	}
	vs := takeRows(genDir, m)
	if vs == nil {
		var err error
		if vs, err = loadVecStore(genDir, m, true); err != nil {
			return m, 0, err
		}
	}
	// Rows read past the committed length (a writer that died before its
	// meta) are cut off the log below: such rows are not kept.
	clean := vs.replayed == m.VecLog
	added = slices.DeleteFunc(added, func(a vecInput) bool { return vs.unchanged(&a.vecDoc) })
	var records []byte
	for _, p := range removed {
		if vs.find(p) >= 0 {
			d := vecDoc{path: p}
			records = logRecord(records, &d, true)
			vs.del(p)
		}
	}
	if len(added) > 0 {
		e, model, err := c.genEmbedder(genDir, m)
		if err != nil {
			return m, 0, err
		}
		slices.SortFunc(added, func(a, b vecInput) int { return storeOrder(&a.vecDoc, &b.vecDoc) })
		var (
			vecs   [][]float32
			failed bool
		)
		if e == nil {
			vecs, failed = make([][]float32, len(added)), true
		} else {
			var runs [][]int
			if model != nil {
				runs = findRuns(vs, added)
			}
			if vecs, failed, err = c.embedDocs(filepath.Dir(genDir), e, model, added, runs); err != nil {
				return m, 0, err
			}
			if !failed && e.ID() != m.Embedder {
				// The configured embedder could not tell its ID at
				// Open; now that it has embedded, it turns out to be
				// another than the vectors' one.
				return m, 0, outdated("its vectors are from %s, the configured embedder is %s", m.Embedder, e.ID())
			}
		}
		for i := range added {
			d := added[i].vecDoc
			d.vec = vecs[i]
			d.pending = d.vec == nil && failed
			if d.vec != nil && len(d.vec) != m.Dim {
				return m, 0, outdated("the embedder gives %d dimensions, its vectors have %d", len(d.vec), m.Dim)
			}
			records = logRecord(records, &d, false)
			vs.put(d)
		}
	}
	if len(records) == 0 {
		if clean {
			c.rows = vs // nothing changed: still the rows of m
		}
		live, _, _ := vs.counts()
		return m, live, nil
	}
	_, log := vecFiles(genDir, m.VecSeq)
	var err error
	if m.VecLog, err = appendLog(log, m.VecLog, records); err != nil {
		return m, 0, err
	}
	live, vectors, pending := vs.counts()
	m.Vectors, m.Pending = vectors, pending
	vs.logged += countRecords(records)
	vs.replayed = m.VecLog
	if logged := vs.logged; logged > compactMin && float64(logged) > compactShare*float64(live) {
		full, err := loadVecStore(genDir, m, false)
		if err != nil {
			return m, 0, err
		}
		docs, err := full.liveDocs()
		if err != nil {
			full.close()
			return m, 0, damaged("vectors: %w", err)
		}
		base, _ := vecFiles(genDir, m.VecSeq+1)
		err = writeVecBase(base, m.Embedder, m.Dim, docs)
		full.close()
		if err != nil {
			return m, 0, err
		}
		m.VecSeq++
		m.VecLog = 0
		return m, live, nil
	}
	if clean {
		c.rows = vs // kept once the meta says so (see keepRows)
	}
	return m, live, nil
}

// rowsKept is the vector rows (loaded without their vectors) that this
// process's last update left, with the generation and log length they are
// up to: a watcher's next batch takes them instead of reading every row
// again (some 50 ms at 100,000 entries). The key can only come back with
// the same rows: other writers append to the log, a compaction starts a
// new sequence number and a rebuild a new generation.
var rowsKept struct {
	sync.Mutex
	genDir string
	seq    int
	log    int64
	vs     *vecStore
}

// takeRows returns a copy of the kept rows for the caller to change, if
// they are those of m. The kept rows themselves do not change: the
// Finders of writers read them meanwhile (see keptRows).
func takeRows(genDir string, m meta) *vecStore {
	rowsKept.Lock()
	defer rowsKept.Unlock()
	vs := rowsKept.vs
	if vs == nil || rowsKept.genDir != genDir || rowsKept.seq != m.VecSeq || rowsKept.log != m.VecLog {
		return nil
	}
	return vs.fork()
}

// keptRows returns the kept rows, the dead among them too, if they are
// those of m: in a process that serves the store, a writer's Finder then
// reads nothing. They never change (see takeRows). A copy of the live ones
// for each writer cost 12 MB at 100,000 entries, and reading them from the
// files, while a batch had taken them, 50 ms.
func keptRows(genDir string, m meta) []vecRow {
	rowsKept.Lock()
	defer rowsKept.Unlock()
	vs := rowsKept.vs
	if vs == nil || rowsKept.genDir != genDir || rowsKept.seq != m.VecSeq || rowsKept.log != m.VecLog {
		return nil
	}
	return vs.rows
}

// keepRows keeps the rows of the update whose meta m was just written.
func (c *call) keepRows(genDir string, m meta) {
	vs := c.rows
	c.rows = nil
	if vs == nil || vs.replayed != m.VecLog {
		return
	}
	rowsKept.Lock()
	rowsKept.genDir, rowsKept.seq, rowsKept.log, rowsKept.vs = genDir, m.VecSeq, m.VecLog, vs
	rowsKept.Unlock()
}

// countRecords counts the records in an encoded batch.
func countRecords(b []byte) int {
	n := 0
	for len(b) > 0 {
		_, k, err := nextRecord(b)
		if err != nil {
			break
		}
		b = b[k:]
		n++
	}
	return n
}

// pendingPaths lists the live documents whose embedding failed.
func pendingPaths(genDir string, m meta) ([]string, error) {
	vs, err := loadVecStore(genDir, m, true)
	if err != nil {
		return nil, err
	}
	var out []string
	for i := range vs.rows {
		if r := &vs.rows[i]; !r.dead && r.pending {
			out = append(out, r.path)
		}
	}
	return out, nil
}

// ForgetKept lets go of what this process keeps from one index update for
// the next: the vector rows, the manifest and the buffer it is written
// from, some 50 MB at 100,000 entries. The next update reads them from the
// files again (about 0.15 s there). A server calls it once it has written
// nothing for a while.
func ForgetKept() {
	rowsKept.Lock()
	rowsKept.vs = nil
	rowsKept.Unlock()
	manifests.Lock()
	manifests.man = nil
	manifests.Unlock()
	manifestBuf.Lock()
	manifestBuf.b = nil
	manifestBuf.Unlock()
}
