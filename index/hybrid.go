package index

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/miramem/mira/embed"
)

// damagedMark is the file a search leaves in a generation whose vectors
// turned out to be damaged when it read them; the next Open rebuilds.
const damagedMark = "damaged"

// vecSide is an Index's vectors and the embedder of its queries, loaded
// by the first search that needs them. A side from a Keep is shared by
// the Indexes that open the same, unchanged generation; refs counts them
// and the Keep, and the last to let go unmaps the vectors.
type vecSide struct {
	once sync.Once
	err  error
	vs   *vecStore
	emb  embed.Embedder
	// rw keeps searches (readers of the vectors) apart from closing them.
	rw sync.RWMutex
	// from, when set, is the side of the same generation and model that
	// this one extends with the log's newer records (see vecStore.extend);
	// this side holds one of its references until it is loaded.
	from *vecSide
	// loaded is set once vs is, for sideFor to know it may extend it.
	loaded atomic.Bool
	// loading: a search is loading the side (under keepMu); settled:
	// the load is over, whether it worked or not.
	loading bool
	settled atomic.Bool

	refs int // under keepMu; 0 for a side nobody shares
}

// keepMu guards every shared side's refs.
var keepMu sync.Mutex

// Keep holds the vectors and the query embedder of the generation last
// searched, between Opens, for a process that serves many searches (see
// Options.Keep). Loading them is most of a hybrid search's work on a
// fresh Index: at 10k entries several milliseconds, against a fraction of
// one for the scan. They are kept only for the built-in embedder, whose
// query embedder comes from the generation itself; an external embedder
// carries each caller's own settings. The generation's lock is kept too,
// for every embedder (see keptLock). The zero Keep is ready to use; the
// Opens that write in the same process must be given the same Keep.
type Keep struct {
	key  string
	base string // key's part that a new side can extend (see sideFor)
	side *vecSide
	held *keptLock // the generation's lock, for every embedder
	// opening is closed when a writer of this process has opened the
	// generation for writing (see writerFor).
	opening chan struct{}
	// writerComes, when set, is closed when a writer of this process
	// next starts opening the generation for writing (WriterComing).
	writerComes chan struct{}
	// releases counts the Releases, so that a handle opened in the
	// background (see downgrade) is not kept past one.
	releases int
}

// Loaded reports whether k holds a generation's vectors, read and ready
// for the next search.
func (k *Keep) Loaded() bool {
	keepMu.Lock()
	defer keepMu.Unlock()
	return k.side != nil && k.side.loaded.Load()
}

// Release lets go of what k holds.
func (k *Keep) Release() {
	keepMu.Lock()
	side := k.side
	k.side, k.key = nil, ""
	k.releases++
	b, _ := k.detachLocked()
	keepMu.Unlock()
	side.release()
	b.shutNow()
}

// sideFor returns the side for an Index of the generation genDir with
// meta m, shared through k when it can be.
func (k *Keep) sideFor(genDir string, m meta) *vecSide {
	if k == nil || !m.DefaultEmbedder {
		return &vecSide{}
	}
	// Everything that changes the vectors or the model changes the meta:
	// a new base file (VecSeq), records in the log (VecLog), a refit
	// (FitDocs, BuiltAt), documents added or removed (Docs, Vectors).
	// Only records added to the log leave the base key as it was: the new
	// side then extends the old one rather than reading it all again.
	base := fmt.Sprintf("%s\x00%s/%d/%d/%d/%d", genDir, m.Embedder, m.Dim, m.VecSeq, m.FitDocs, m.BuiltAt.UnixNano())
	key := fmt.Sprintf("%s/%d/%d/%d", base, m.VecLog, m.Docs, m.Vectors)
	keepMu.Lock()
	if k.side != nil && k.key == key && k.side.err == nil {
		k.side.refs++
		side := k.side
		keepMu.Unlock()
		return side
	}
	old := k.side
	k.key, k.side = key, &vecSide{refs: 2} // k's and the caller's
	side := k.side
	if old != nil && k.base == base && old.loaded.Load() && old.vs.replayed <= m.VecLog {
		old.refs++ // the new side's, until it is loaded
		side.from = old
	}
	k.base = base
	keepMu.Unlock()
	old.release()
	return side
}

// release drops one reference to a shared side (any reference to one that
// is not shared), closing the vectors with the last one.
func (side *vecSide) release() {
	if side == nil {
		return
	}
	keepMu.Lock()
	if side.refs > 0 {
		side.refs--
	}
	last := side.refs == 0
	var from *vecSide
	if last {
		from, side.from = side.from, nil // never loaded
	}
	keepMu.Unlock()
	from.release()
	if last && side.vs != nil {
		// Nothing a search returned points into the vectors.
		side.rw.Lock()
		side.vs.close()
		side.vs = nil
		side.rw.Unlock()
	}
}

// extend loads side from the side it extends (side.from), and reports
// whether it could: the old side's vectors with the log's newer records,
// and its query embedder. When it cannot, the caller reads everything.
func (side *vecSide) extend(genDir string, m meta) bool {
	keepMu.Lock()
	from := side.from
	keepMu.Unlock()
	if from == nil {
		return false
	}
	// side.from stays set until this ends, for the searches that use it
	// meanwhile (see searchSide).
	defer func() {
		keepMu.Lock()
		side.from = nil
		keepMu.Unlock()
		from.release()
	}()
	from.rw.RLock()
	defer from.rw.RUnlock()
	if from.vs == nil || from.err != nil {
		return false
	}
	_, log := vecFiles(genDir, m.VecSeq)
	vs, err := from.vs.extend(log, m.VecLog)
	if err != nil {
		return false
	}
	if live, _, _ := vs.counts(); live != m.Docs {
		vs.close()
		return false
	}
	side.vs, side.emb = vs, from.emb
	return true
}

// loadVectors reads the generation's vectors and gets its embedder, once
// per side.
func (ix *Index) loadVectors() (*vecSide, error) {
	ix.vecOnce.Do(func() { ix.vec = ix.c.opt.Keep.sideFor(ix.gen, ix.meta) })
	side := ix.vec
	side.once.Do(func() {
		defer side.settled.Store(true)
		m := ix.meta
		if side.from != nil && side.extend(ix.gen, m) {
			side.loaded.Store(true)
			return
		}
		// The model and the vectors are read side by side: each takes
		// milliseconds at 10k entries, and a query waits for both.
		type model struct {
			emb embed.Embedder
			err error
		}
		mc := make(chan model, 1)
		go func() {
			emb, _, err := ix.c.genEmbedder(ix.gen, m)
			mc <- model{emb, err}
		}()
		var (
			vs  *vecStore
			err error
		)
		if ix.c.opt.Keep == nil {
			vs, err = loadVecStore(ix.gen, m, false)
		} else if vs, err = loadKeptVecStore(ix.gen, m); err == nil {
			// A process that keeps its vectors for many searches
			// codes them (q8.go) in the background: the searches
			// meanwhile scan the floats. The coder reads the floats
			// from the file, not through the mapping the scans read
			// and let go of behind them, so neither brings back the
			// other's pages. Large ones are coded once the first
			// search has scanned them, which then has every
			// processor to itself: at a million entries the coding
			// takes seconds, the scan one.
			if vs.mapped != nil && vs.mapped.behind {
				vs.q8.afterScan = true
			} else {
				vs.buildCodes()
			}
		}
		md := <-mc
		emb := md.emb
		if md.err == nil && emb == nil {
			md.err = fmt.Errorf("the vectors are from %s, which is not the configured embedder", m.Embedder)
		}
		if md.err != nil {
			if vs != nil {
				vs.close()
			}
			side.err = ix.markDamaged(md.err)
			return
		}
		if err == nil {
			if live, _, _ := vs.counts(); live != m.Docs {
				vs.close()
				err = damaged("%d documents have vectors, the index holds %d", live, m.Docs)
			}
		}
		if err != nil {
			side.err = ix.markDamaged(err)
			return
		}
		side.vs, side.emb = vs, emb
		side.loaded.Store(true)
	})
	return side, side.err
}

// markDamaged leaves the damage mark in the generation when err says its
// files are damaged, so that the next Open rebuilds it.
func (ix *Index) markDamaged(err error) error {
	var d *damagedError
	if errors.As(err, &d) && !d.outdated && !d.missing {
		os.WriteFile(filepath.Join(ix.gen, damagedMark), []byte(err.Error()+"\n"), 0o600)
	}
	return err
}

// vecQuery is a query's vector and the vectors to search.
type vecQuery struct {
	side *vecSide
	vec  []float32 // unit length; nil when the query has no words the embedder knows
	done func()    // called when the search is done with side; nil: nothing to do
	// read is the rows' floats this search has read from the vector
	// file, shared with the query feedback moves (see vecStore.exact):
	// the rows a search scores again (the feedback's pool, the fused
	// candidates) are mostly those it scored first.
	read *readRows
}

// readRows keeps the floats of the rows a search read from the file.
// Its room goes back to readRowsPool when the search is done: at 100k
// entries a search reads about 300 rows, and a server's recalls had
// allocated half a megabyte each for them, most of the garbage the
// collector had to keep up with.
type readRows struct {
	mu     sync.Mutex
	rows   map[int][]float32
	free   []float32   // room for the next rows
	chunks [][]float32 // the room, 64 rows at a time; chunks[:used] handed out
	used   int
}

var readRowsPool = sync.Pool{New: func() any { return &readRows{rows: map[int][]float32{}} }}

// room returns room for dim floats.
func (r *readRows) room(dim int) []float32 {
	if len(r.free) < dim {
		if r.used < len(r.chunks) && len(r.chunks[r.used]) == 64*dim {
			r.free = r.chunks[r.used]
		} else {
			r.free = make([]float32, 64*dim)
			r.chunks = append(r.chunks[:r.used], r.free)
		}
		r.used++
	}
	return r.free[:dim:dim]
}

// recycle forgets the rows read and puts r back in readRowsPool. Nothing
// may use them afterwards.
func (r *readRows) recycle() {
	clear(r.rows)
	r.free, r.used = nil, 0
	readRowsPool.Put(r)
}

// exact returns row i's floats as vs.exact does, read from the file once
// per search.
func (vq *vecQuery) exact(i int) []float32 {
	vs, r := vq.side.vs, vq.read
	if !vs.paged() || r == nil {
		return vs.exact(i, nil)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if v, ok := r.rows[i]; ok {
		return v
	}
	buf := r.room(vs.dim)
	v := vs.exact(i, buf)
	if len(v) > 0 && &v[0] == &buf[0] {
		r.free = r.free[vs.dim:]
	}
	r.rows[i] = v
	return v
}

// release gives back what the query's side needs given back, and the
// room of the rows it read: the search is done with them.
func (vq *vecQuery) release() {
	if vq == nil {
		return
	}
	if vq.done != nil {
		vq.done()
	}
	if vq.read != nil {
		vq.read.recycle()
		vq.read = nil
	}
}

// rowsFor returns the rows and postings a search without a query vector
// reads, and what to call when it is done with them: the vector side when
// this Index has it loaded or a Keep keeps it, else the rows alone (their
// vectors not read), once per Index. The side's floats may be damaged
// where its rows are not: the rows are read alone then.
func (ix *Index) rowsFor() (*vecStore, func(), error) {
	if ix.c.opt.Keep != nil || (ix.vec != nil && ix.vec.loaded.Load()) {
		side, done, err := ix.searchSide()
		if err == nil && side.vs != nil {
			side.rw.RLock()
			return side.vs, func() { side.rw.RUnlock(); done() }, nil
		}
		done()
	}
	ix.rowsOnce.Do(func() {
		vs, err := loadVecStore(ix.gen, ix.meta, true)
		if err == nil {
			if live, _, _ := vs.counts(); live != ix.meta.Docs {
				vs.close()
				err = damaged("%d documents have rows, the meta says %d", live, ix.meta.Docs)
			}
		}
		if err == nil {
			ix.rows = vs
			return
		}
		ix.rowsErr = ix.markDamaged(err)
		if !IsDamaged(err) {
			return
		}
		// The next Open rebuilds; this search makes do with what can be
		// read: the base file's rows and the log up to its first bad
		// record.
		m := ix.meta
		m.VecLog = 0
		if vs, lerr := loadVecStore(ix.gen, m, true); lerr == nil {
			ix.c.warn(ix.dir, fmt.Errorf("searching what could be read: %w", err))
			ix.rows, ix.rowsErr, ix.rowsPartial = vs, nil, true
		}
	})
	return ix.rows, func() {}, ix.rowsErr
}

// LoadVectors reads the generation's vectors and its query embedder now,
// as the first hybrid search would: a server calls it when it starts, so
// that its first requests do not wait for them. With a Keep they stay
// for the Indexes opened after.
func (ix *Index) LoadVectors() error {
	if ix.lk == nil || ix.closed {
		return errors.New("index is closed")
	}
	_, err := ix.loadVectors()
	return err
}

// searchSide returns the vectors for a search now, and what to call when
// the search is done with them. While one search extends the Index's side
// from the one before it (the log's last few records), the others search
// the one before, as the index was a moment earlier, rather than queue
// behind it: under a steady load of requests and turns they otherwise all
// waited, for as long as the one extending waited for the processor.
func (ix *Index) searchSide() (*vecSide, func(), error) {
	ix.vecOnce.Do(func() { ix.vec = ix.c.opt.Keep.sideFor(ix.gen, ix.meta) })
	side := ix.vec
	if !side.loaded.Load() {
		keepMu.Lock()
		if from := side.from; from != nil && side.loading && !side.settled.Load() && from.loaded.Load() {
			from.refs++
			keepMu.Unlock()
			return from, from.release, nil
		}
		side.loading = true
		keepMu.Unlock()
	}
	_, err := ix.loadVectors()
	return side, func() {}, err
}

// vectorQuery embeds the query text.
func (ix *Index) vectorQuery(text string) (*vecQuery, error) {
	side, done, err := ix.searchSide()
	if err != nil {
		done()
		return nil, err
	}
	vq := &vecQuery{side: side, done: done, read: readRowsPool.Get().(*readRows)}
	if side.vs.dim == 0 {
		return vq, nil // an external embedder never reached: no vectors
	}
	side.rw.RLock() // familyTexts reads the postings
	texts := append([]string{text}, side.vs.familyTexts(text)...)
	side.rw.RUnlock()
	vecs, err := side.emb.Embed(ix.c.ctx(), texts)
	if err != nil {
		done()
		return nil, fmt.Errorf("embed the query: %w", err)
	}
	if id := side.emb.ID(); id != side.vs.embedder {
		done()
		return nil, fmt.Errorf("the vectors are from %s, the configured embedder is %s", side.vs.embedder, id)
	}
	if len(vecs) != len(texts) {
		done()
		return nil, fmt.Errorf("the embedder gave %d vectors for %d texts", len(vecs), len(texts))
	}
	for _, v := range vecs {
		if len(v) != side.vs.dim {
			done()
			return nil, fmt.Errorf("the embedder gave a query vector of the wrong length")
		}
	}
	v := vecs[0]
	if !normalize(v) {
		return vq, nil
	}
	// The members of the families the query names move it toward them,
	// at familyWeight each (see families).
	moved := false
	for _, e := range vecs[1:] {
		if normalize(e) {
			for d := range v {
				v[d] += float32(familyWeight) * e[d]
			}
			moved = true
		}
	}
	if !moved || normalize(v) {
		vq.vec = v
	}
	return vq, nil
}

// familyTexts returns, for each family a word of text names, the members
// that the store's live memories name, as written, one text per family:
// what the query's kind word stands for in this store. It is nil for most
// queries.
func (vs *vecStore) familyTexts(text string) []string {
	_, groups := textTerms(text)
	if len(groups) == 0 {
		return nil
	}
	ln := vs.norms()
	var out []string
	for _, g := range groups {
		if g.choice {
			// "chose", "decided": the words of choosing say what
			// a memory is about far less than a product's name
			// does, and moved LoCoMo's "why did she decide…"
			// questions toward every turn that has one.
			continue
		}
		var words []string
		for i, t := range g.terms {
			live := false
			vs.eachPosting(t, func(row int, _ uint32) { live = live || ln.k[row] >= 0 })
			if live {
				words = append(words, g.words[i])
			}
		}
		if len(words) > 0 {
			out = append(out, strings.Join(words, " "))
		}
	}
	return out
}

// normalize scales v to unit length in place; it reports false for a zero
// (or not finite) vector, which has no direction.
func normalize(v []float32) bool {
	var ss float64
	for _, x := range v {
		ss += float64(x) * float64(x)
	}
	if ss == 0 || math.IsInf(ss, 0) || math.IsNaN(ss) {
		return false
	}
	inv := float32(1 / math.Sqrt(ss))
	for i := range v {
		v[i] *= inv
	}
	return true
}

// rowFilter is a query's filters over the vector store's rows.
type rowFilter struct {
	kinds, scopes, tags map[int32]bool // nil: no filter on the field
	tagPool             []int32        // the store's (vecStore.tagsOf)
	since               int64
	hasSince            bool
	until               int64 // unix ns, exclusive
	hasUntil            bool
	linked              bool // only rows that name others (facts.go)
}

// newRowFilter compiles the query's filters, nil when it has none. A value
// the store has never seen matches nothing.
func newRowFilter(vs *vecStore, q Query) *rowFilter {
	f := &rowFilter{}
	set := func(values []string) map[int32]bool {
		if len(values) == 0 {
			return nil
		}
		m := map[int32]bool{}
		for _, v := range values {
			if i, ok := vs.dictIx[v]; ok && v != "" {
				m[i] = true
			}
		}
		return m
	}
	f.kinds, f.scopes, f.tags = set(q.Kinds), set(q.Scopes), set(q.Tags)
	f.tagPool = vs.tagPool
	if !q.Since.IsZero() {
		f.since, f.hasSince = q.Since.UnixNano(), true
	}
	if !q.until.IsZero() {
		f.until, f.hasUntil = q.until.UnixNano(), true
	}
	if f.kinds == nil && f.scopes == nil && f.tags == nil && !f.hasSince && !f.hasUntil {
		return nil
	}
	return f
}

func (f *rowFilter) pass(r *vecRow) bool {
	if f.linked && !r.linked {
		return false
	}
	if f.kinds != nil && !f.kinds[r.kind] || f.scopes != nil && !f.scopes[r.scope] {
		return false
	}
	if f.hasSince && (!r.hasCreated || r.created < f.since) {
		return false
	}
	if f.hasUntil && (!r.hasCreated || r.created >= f.until) {
		return false
	}
	if f.tags != nil {
		for _, t := range f.tagPool[r.tagOff : r.tagOff+r.ntag] {
			if f.tags[t] {
				return true
			}
		}
		return false
	}
	return true
}

// vecHit is a vector candidate: a row and its cosine with the query.
type vecHit struct {
	row int
	cos float64
}

// nearest returns the n rows that pass the query's filters with the
// highest cosine above minCos, best first: an exact scan of every row's
// stored vector, filters applied as it goes.
//
// Vectors are unit length when stored, so a dot product is their cosine.
// The scan replaces an index of github.com/kelindar/search built in every
// process: that package copies and normalises each vector as it is added
// and can load none already normalised with an id, so a query paid for
// building the index again, about fifteen times this scan at 10k rows
// (BenchmarkVectorParts). A command runs one query per process, so the
// build never pays off.
func (vq *vecQuery) nearest(q Query, n int, minCos float64) ([]vecHit, error) {
	return vq.nearestIn(q, false, n, minCos)
}

// nearestIn is nearest, of the rows that name others only when linked.
func (vq *vecQuery) nearestIn(q Query, linked bool, n int, minCos float64) ([]vecHit, error) {
	if vq.vec == nil || n <= 0 {
		return nil, nil
	}
	vs := vq.side.vs
	f := linkedFilter(vs, q, linked)
	parts := 1
	// A scan alone is split over the processors; beside others (a
	// server under load) each stays in its own goroutine: the processors
	// are busy anyway, and a split scan waits for every part to be
	// scheduled among all the others.
	if len(vs.rows) >= 2*scanChunk && searches.Load() <= 1 {
		parts = min(runtime.GOMAXPROCS(0), len(vs.rows)/scanChunk)
	}
	if base, log := vs.codesFor(); log != nil {
		if sets := vs.signsFor(base, log); sets != nil {
			return vq.nearestCoarse(f, n, minCos, base, log, sets, parts), nil
		}
		return vq.nearestQ8(f, n, minCos, base, log, parts), nil
	}
	tops := make([][]vecHit, parts)
	var wg sync.WaitGroup
	for p := range parts {
		lo, hi := p*len(vs.rows)/parts, (p+1)*len(vs.rows)/parts
		wg.Go(func() { tops[p] = vq.scan(f, lo, hi, n, minCos) })
	}
	wg.Wait()
	if vs.q8 != nil && vs.q8.afterScan {
		vs.buildCodes()
	}
	top := tops[0]
	for _, t := range tops[1:] {
		for _, h := range t {
			top = insertTop(top, h, n)
		}
	}
	return top, nil
}

// feedback returns the query moved toward the best fused hit (Rocchio's
// pseudo-relevance feedback with one document): unit(q + beta·v), v the
// hit's unit vector. Nil when there is nothing to move toward.
func (vq *vecQuery) feedback(fused []Hit, beta float64) *vecQuery {
	if vq.vec == nil || len(fused) == 0 {
		return nil
	}
	vs := vq.side.vs
	i := vs.find(fused[0].Path)
	if i < 0 {
		return nil
	}
	v := vq.exact(i)
	if v == nil {
		return nil
	}
	q2 := slices.Clone(vq.vec)
	for d := range q2 {
		q2[d] += float32(beta) * v[d]
	}
	if !normalize(q2) {
		return nil
	}
	// It shares vq's rows read, and vq's release gives them back: it is
	// not released itself.
	return &vecQuery{side: vq.side, vec: q2, read: vq.read}
}

// rescore ranks the rows of pool by their cosine with vq and returns the
// n best above minCos. The moved query stays close to the first (beta is
// small), so its best rows are among the first query's best 2n: rescoring
// them gave the same LoCoMo results as a second scan of every row.
func (vq *vecQuery) rescore(pool []vecHit, n int, minCos float64) []vecHit {
	top := make([]vecHit, 0, n+1)
	for _, h := range pool {
		if c := dot(vq.vec, vq.exact(h.row)); c > minCos {
			top = insertTop(top, vecHit{row: h.row, cos: c}, n)
		}
	}
	return top
}

// searches counts the hybrid searches under way in the process.
var searches atomic.Int32

// scanChunk is the fewest rows worth a goroutine of their own: at 384
// dimensions a thousand dot products take about 0.15 ms.
const scanChunk = 4096

// scan returns the n best rows in [lo, hi) that pass f, best first.
func (vq *vecQuery) scan(f *rowFilter, lo, hi, n int, minCos float64) []vecHit {
	vs := vq.side.vs
	top := make([]vecHit, 0, n+1)
	// Where the floats' pages are let go of behind a pass (large ones,
	// see sharedMap.behind), the scan lets go of each chunk's once it
	// has read them; the base's vectors are in row order.
	behind := vs.mapped != nil && vs.mapped.behind
	from, next := -1, 0
	for i := lo; i < hi; i++ {
		if behind && i%scanChunk == 0 && from >= 0 {
			vs.mapped.dropVecs(from, next, vs.dim)
			from = -1
		}
		r := &vs.rows[i]
		if r.dead || r.vec < 0 || (f != nil && !f.pass(r)) {
			continue
		}
		if behind && int(r.vec) < vs.nbaseVec {
			if from < 0 {
				from = int(r.vec)
			}
			next = int(r.vec) + 1
		}
		c := dot(vq.vec, vs.vector(i))
		if c <= minCos || (len(top) == n && c <= top[n-1].cos) {
			continue
		}
		top = insertTop(top, vecHit{row: i, cos: c}, n)
	}
	if behind && from >= 0 {
		vs.mapped.dropVecs(from, next, vs.dim)
	}
	return top
}

// insertTop inserts h into top (best first, at most n long). Equal
// cosines keep row order, so results do not depend on how the rows were
// split.
func insertTop(top []vecHit, h vecHit, n int) []vecHit {
	j := len(top)
	for j > 0 && (top[j-1].cos < h.cos || top[j-1].cos == h.cos && top[j-1].row > h.row) {
		j--
	}
	if j >= n {
		return top
	}
	top = slices.Insert(top, j, h)
	if len(top) > n {
		top = top[:n]
	}
	return top
}

// cand is a candidate of either side on its way through the stages.
type cand struct {
	Candidate
	vec              []float32
	row              int // in the vector store, -1: none
	cos              float64
	lexRank, vecRank int
	lexNorm, vecNorm float64
	fused            float64
	fusionRank       int
	recency, bonus   float64
	date             float64 // the date bonus
	decision         float64 // the decision bonus
	score            float64
	penalty          float64
}

func (c *cand) hit(score float64, rank int) Hit {
	return Hit{ID: c.ID, Path: c.Path, Score: score, Why: Why{
		BM25: c.BM25, Relevance: c.lexNorm, Vector: c.cos, Fused: c.fused,
		FusionRank: c.fusionRank, LexicalRank: c.lexRank, VectorRank: c.vecRank,
		Recency: c.recency, Project: c.bonus, Date: c.date, Decision: c.decision, MMRPenalty: c.penalty, Rank: rank,
	}}
}

// hitsFor returns room for n hits (nil for none, as appending would).
func hitsFor(n int) []Hit {
	if n == 0 {
		return nil
	}
	return make([]Hit, 0, n)
}

// fuse merges the lexical candidates (BM25 order) and the vector ones
// (cosine order), ranks them and applies MMR.
func fuse(r Ranking, q Query, spans []span, lex []Candidate, vecs []vecHit, vq *vecQuery, now time.Time, k int) Stages {
	vs := vq.side.vs
	byPath := make(map[string]*cand, len(lex)+len(vecs))
	// Every candidate in one allocation: there are at most this many.
	slab := make([]cand, 0, len(lex)+len(vecs))
	all := make([]*cand, 0, len(lex)+len(vecs))

	// get returns the candidate of path, at row+1 vrow of the vectors
	// (0: to be looked up, -1: none).
	get := func(path string, vrow int) *cand {
		if c, ok := byPath[path]; ok {
			return c
		}
		if vrow == 0 {
			vrow = vs.find(path) + 1
		}
		slab = append(slab, cand{Candidate: Candidate{Path: path}, row: vrow - 1})
		c := &slab[len(slab)-1]
		if c.row >= 0 {
			c.vec = vq.exact(c.row)
			if c.vec != nil && vq.vec != nil {
				c.cos = dot(vq.vec, c.vec)
			}
		}
		byPath[path] = c
		all = append(all, c)
		return c
	}
	for i, l := range lex {
		c := get(l.Path, l.vrow)
		c.Candidate, c.lexRank = l, i+1
	}
	for i, h := range vecs {
		row := &vs.rows[h.row]
		c := get(row.path, h.row+1)
		if c.lexRank == 0 {
			vs.fields(h.row, &c.Candidate)
		}
		c.cos, c.vecRank = h.cos, i+1
	}
	// Min–max normalisation of each side over its candidates.
	minMax := func(score func(*cand) float64, in func(*cand) bool, set func(*cand, float64)) {
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, c := range all {
			if in(c) {
				lo, hi = min(lo, score(c)), max(hi, score(c))
			}
		}
		for _, c := range all {
			if !in(c) {
				continue
			}
			v := 1.0
			if hi > lo {
				v = (score(c) - lo) / (hi - lo)
			}
			set(c, v)
		}
	}
	// spanned is minMax over a range at least span(hi) wide: the best
	// gets 1, the others 1 − (hi − score)/range. Min–max alone stretches
	// any spread to [0, 1], so two candidates that differ by a hair (a
	// word the query does not ask for moves the vector a little) would be
	// a whole side's weight apart, more than years of recency; see
	// Ranking.VectorSpan.
	spanned := func(score func(*cand) float64, in func(*cand) bool, set func(*cand, float64), span func(hi float64) float64) {
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, c := range all {
			if in(c) {
				lo, hi = min(lo, score(c)), max(hi, score(c))
			}
		}
		w := span(hi)
		for _, c := range all {
			if !in(c) {
				continue
			}
			v := 1.0
			switch {
			case hi-lo >= w && hi > lo:
				v = (score(c) - lo) / (hi - lo)
			case w > 0:
				v = 1 - (hi-score(c))/w
			}
			set(c, v)
		}
	}
	spanned(func(c *cand) float64 { return c.BM25 }, func(c *cand) bool { return c.lexRank > 0 },
		func(c *cand, v float64) { c.lexNorm = v }, func(hi float64) float64 { return r.LexicalSpan * hi })
	spanned(func(c *cand) float64 { return c.cos }, func(c *cand) bool { return c.vecRank > 0 },
		func(c *cand, v float64) { c.vecNorm = v }, func(float64) float64 { return r.VectorSpan })
	alpha := r.LexicalShare
	switch {
	case len(lex) == 0:
		alpha = 0
	case len(vecs) == 0:
		alpha = 1
	}
	if q.Fusion == FusionRRF {
		// Reciprocal ranks lie in a narrow band (1/61 to 2/61 for k = 60):
		// min–max normalised like the scores of the weighted fusion, they
		// weigh as much against recency and MMR.
		for _, c := range all {
			if c.lexRank > 0 {
				c.fused += 1 / (r.RRFK + float64(c.lexRank))
			}
			if c.vecRank > 0 {
				c.fused += 1 / (r.RRFK + float64(c.vecRank))
			}
		}
		minMax(func(c *cand) float64 { return c.fused }, func(*cand) bool { return true },
			func(c *cand, v float64) { c.fused = v })
	} else {
		for _, c := range all {
			c.fused = alpha*c.lexNorm + (1-alpha)*c.vecNorm
		}
	}
	// Fused order: by fused relevance, ties by the lexical side, then the
	// vector side, then path.
	slices.SortStableFunc(all, func(a, b *cand) int {
		return cmp.Or(cmp.Compare(b.fused, a.fused), cmp.Compare(b.BM25, a.BM25), cmp.Compare(b.cos, a.cos), cmp.Compare(a.Path, b.Path))
	})
	for i, c := range all {
		c.fusionRank = i + 1
		c.recency = Recency(c.CreatedAt, now, r.RecencyDays)
		if q.Project != "" && c.Project == q.Project {
			c.bonus = r.ProjectBonus
		}
		c.date = max(r.dateBonus(c.CreatedAt, spans), r.DateBonus*q.mentions[c.row])
		c.decision = r.decisionBonus(c.Kind, q.intent)
		c.score = r.Relevance*c.fused + r.Recency*c.recency + c.bonus + c.date + c.decision
	}
	st := Stages{Lexical: hitsFor(len(lex)), Vector: hitsFor(len(vecs)), Fused: hitsFor(len(all)), Ranked: hitsFor(len(all))}
	for _, l := range lex {
		c := byPath[l.Path]
		st.Lexical = append(st.Lexical, c.hit(c.BM25, c.lexRank))
	}
	for _, h := range vecs {
		c := byPath[vs.rows[h.row].path]
		st.Vector = append(st.Vector, c.hit(c.cos, c.vecRank))
	}
	for i, c := range all {
		st.Fused = append(st.Fused, c.hit(c.fused, i+1))
	}
	ranked := slices.Clone(all)
	slices.SortStableFunc(ranked, byScore)
	for i, c := range ranked {
		st.Ranked = append(st.Ranked, c.hit(c.score, i+1))
	}
	for i, c := range mmr(ranked, k, r.MMRLambda, r.MMRFloor) {
		st.Final = append(st.Final, c.hit(c.score-c.penalty, i+1))
	}
	return st
}

// byScore orders candidates as Rank does: by score, newer first, then by
// id and path.
func byScore(a, b *cand) int {
	if c := cmp.Compare(b.score, a.score); c != 0 {
		return c
	}
	if c := b.CreatedAt.Compare(a.CreatedAt); c != 0 {
		return c
	}
	return cmp.Or(cmp.Compare(a.ID, b.ID), cmp.Compare(a.Path, b.Path))
}

// mmr picks k of the ranked candidates by maximal marginal relevance: each
// time the one whose score minus (1−λ)/λ times its highest cosine with a
// candidate already picked is highest (see Ranking). Candidates without a
// vector are not penalised. It sets each pick's penalty.
func mmr(ranked []*cand, k int, lambda, floor float64) []*cand {
	k = min(k, len(ranked))
	if lambda >= 1 || lambda <= 0 {
		return ranked[:k]
	}
	w := (1 - lambda) / lambda
	left := slices.Clone(ranked)
	sim := make([]float64, len(left)) // highest cosine with a pick so far
	out := make([]*cand, 0, k)
	for len(out) < k {
		best := 0
		for i := 1; i < len(left); i++ {
			vi := left[i].score - w*max(sim[i], 0)
			vb := left[best].score - w*max(sim[best], 0)
			// Ties keep the ranked order, which left preserves.
			if vi > vb {
				best = i
			}
		}
		pick := left[best]
		pick.penalty = w * max(sim[best], 0)
		out = append(out, pick)
		left = slices.Delete(left, best, best+1)
		sim = slices.Delete(sim, best, best+1)
		if pick.vec == nil {
			continue
		}
		for i, c := range left {
			if c.vec != nil {
				sim[i] = max(sim[i], redundancy(dot(pick.vec, c.vec), floor))
			}
		}
	}
	return out
}

// redundancy is the similarity MMR weighs for a cosine: none up to floor,
// the cosine itself above it.
func redundancy(cos, floor float64) float64 {
	if cos <= floor {
		return 0
	}
	return cos
}
