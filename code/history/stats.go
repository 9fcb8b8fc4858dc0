package history

import (
	"cmp"
	"math"
	"slices"
	"strings"
	"time"
)

// Defaults of the Options fields left zero.
const (
	DefaultHalfLife = 180 * 24 * time.Hour
	DefaultMaxFiles = 50
	DefaultPartners = 64
	DefaultAuthors  = 32
	DefaultLogLen   = 32
)

// The largest options allowed: MaxFiles bounds the pairs a commit adds
// (its square), MaxKept what a file keeps of partners, authors and log.
const (
	MaxMaxFiles = 1000
	MaxKept     = 4096
)

// Options tune a Stats. They are fixed when the Stats is made and kept
// in its encoding.
type Options struct {
	// HalfLife is the age at which a commit counts half as much as a new
	// one. Ages are measured from the newest commit added (not the
	// clock), so the same history always gives the same answers.
	HalfLife time.Duration
	// MaxFiles is the most files a commit may change and still say which
	// files change together: a larger one (a mass reformatting, a
	// vendored library, an initial import) gives no pairs, and adds
	// nothing to the weights of its files and authors, though it counts
	// in their commits and last dates and appears in their logs.
	MaxFiles int
	// Partners is how many co-change partners a file keeps: when it has
	// twice as many, the lighter half is dropped. Each commit adds n²
	// pairs; this keeps the whole linear in the number of files.
	Partners int
	// Authors is how many authors a file keeps, in the same way.
	Authors int
	// LogLen is how many recent commits a file keeps for Log.
	LogLen int
	// MaxFiles is cut to MaxMaxFiles, the others to MaxKept.
}

func (o Options) withDefaults() Options {
	if o.HalfLife <= 0 {
		o.HalfLife = DefaultHalfLife
	}
	if o.MaxFiles <= 1 {
		o.MaxFiles = DefaultMaxFiles
	}
	if o.Partners <= 0 {
		o.Partners = DefaultPartners
	}
	if o.Authors <= 0 {
		o.Authors = DefaultAuthors
	}
	if o.LogLen <= 0 {
		o.LogLen = DefaultLogLen
	}
	o.MaxFiles = min(o.MaxFiles, MaxMaxFiles)
	o.Partners = min(o.Partners, MaxKept)
	o.Authors = min(o.Authors, MaxKept)
	o.LogLen = min(o.LogLen, MaxKept)
	return o
}

// Stats aggregates commits: which files change together, who changed a
// file, and its recent commits. A commit's weight halves every HalfLife
// of age; in a pair, a commit of n files gives each of its files' pairs
// 1/(n-1), so every commit spreads one unit over a file's partners: a
// two-file commit says much about the pair, a twenty-file commit little
// about any one of its pairs. (1/log2(1+n) would let a 20-file commit
// weigh a fifth of a 2-file one per pair and sum to 4.4 units per file:
// large commits would dominate the partners of the files they touch.)
//
// The zero Stats is ready to use with the default options. Its queries
// (Cochange, Experts, Log, File) may run at the same time as each other;
// Add and UnmarshalBinary need the Stats to themselves. It is encoded with MarshalBinary (so
// encoding/gob works too) and decoded with UnmarshalBinary.
type Stats struct {
	// Head is the commit the Stats was built up to. Add does not set it:
	// the caller does, after Add, so that the two are kept and encoded
	// together.
	Head string

	opt     Options
	ready   bool
	newest  int64 // unix seconds of the newest commit added
	added   int   // commits added
	paths   []string
	pathID  map[string]int32
	files   []fileStats // by path id
	authors []author
	byEmail map[string]int32
	commits []commitRec // in the order added, oldest first
}

type fileStats struct {
	commits  int32
	gone     bool // removed by the last commit that touched it
	weight   decayed
	partners map[int32]*pairStats
	authors  map[int32]*pairStats
	log      []int32 // commit slots, oldest first
}

// pairStats is what one file knows of a partner file or of an author.
type pairStats struct {
	count  int32
	weight decayed
}

// decayed is a weight as it stood at the time last (unix seconds).
type decayed struct {
	w    float64
	last int64
}

type author struct {
	name, email string
	last        int64 // date of the commit the name was taken from
}

type commitRec struct {
	hash    string // "" once no file's log holds the commit
	author  int32
	when    int64
	subject string
	files   []int32
	refs    int32 // files whose log holds it
}

// NewStats returns an empty Stats with the given options.
func NewStats(opt Options) *Stats {
	s := &Stats{opt: opt}
	s.init()
	return s
}

func (s *Stats) init() {
	if s.ready {
		return
	}
	s.opt = s.opt.withDefaults()
	s.pathID = map[string]int32{}
	s.byEmail = map[string]int32{}
	s.ready = true
}

// Options returns the options the Stats works with.
func (s *Stats) Options() Options { s.init(); return s.opt }

// Newest returns the date of the newest commit added, or the zero time.
func (s *Stats) Newest() time.Time {
	if s.added == 0 {
		return time.Time{}
	}
	return unixTime(s.newest)
}

// Len returns the number of commits added.
func (s *Stats) Len() int { return s.added }

// at returns the weight d at time t: decayed further if t is later than
// its last change, as it was if t is earlier.
func (s *Stats) at(d decayed, t int64) float64 {
	if t <= d.last {
		return d.w
	}
	return d.w * math.Exp2(-float64(t-d.last)/s.opt.HalfLife.Seconds())
}

// add adds c at time t.
func (s *Stats) add(d *decayed, c float64, t int64) {
	if t >= d.last {
		d.w = s.at(*d, t) + c
		d.last = t
		return
	}
	d.w += c * math.Exp2(-float64(d.last-t)/s.opt.HalfLife.Seconds())
}

func (s *Stats) id(path string) int32 {
	if id, ok := s.pathID[path]; ok {
		return id
	}
	id := int32(len(s.paths))
	s.paths = append(s.paths, path)
	s.files = append(s.files, fileStats{})
	s.pathID[path] = id
	return id
}

func (s *Stats) authorID(name, email string, when int64) int32 {
	key := strings.ToLower(strings.TrimSpace(email))
	if key == "" {
		key = name
	}
	id, ok := s.byEmail[key]
	if !ok {
		id = int32(len(s.authors))
		s.authors = append(s.authors, author{name: name, email: key, last: when})
		s.byEmail[key] = id
		return id
	}
	if a := &s.authors[id]; when >= a.last {
		a.name, a.last = name, when
	}
	return id
}

// Add adds commits, given newest first as Read returns them, that are
// newer than those already added. Adding a list in parts gives the same
// Stats as adding it at once, and so does adding to a Stats that was
// encoded and decoded in between.
//
// A rebuild from scratch may see the same commits in another order: Read
// orders them by date, and a branch merged after the last read brings
// commits dated before ones already added. Weights may then differ in
// their last digits, the lightest partners may be pruned at other points
// (and a pair pruned and seen again counts from then on), and a file's
// log lists commits in the order they were added.
// (On prometheus, read from three points and from scratch, the ten first
// partners of a file and their counts were the same.)
func (s *Stats) Add(commits []Commit) {
	s.init()
	for i := len(commits) - 1; i >= 0; i-- {
		s.addOne(&commits[i])
	}
}

func (s *Stats) addOne(c *Commit) {
	when := c.When.Unix()
	if s.added == 0 || when > s.newest {
		s.newest = when
	}
	s.added++
	for _, r := range c.Renames {
		s.rename(r.From, r.To)
	}
	removed := map[string]bool{}
	for _, p := range c.Removed {
		removed[p] = true
	}
	ids := make([]int32, 0, len(c.Files))
	for _, p := range c.Files {
		ids = append(ids, s.id(p))
	}
	slices.Sort(ids)
	ids = slices.Compact(ids)
	if len(ids) == 0 {
		return // no log would hold it
	}
	slot := int32(len(s.commits))
	s.commits = append(s.commits, commitRec{
		hash:    strings.ToLower(c.Hash),
		author:  s.authorID(c.Author, c.Email, when),
		when:    when,
		subject: c.Subject,
		files:   ids,
	})
	rec := &s.commits[slot]
	weight := 1.0
	if len(ids) > s.opt.MaxFiles {
		weight = 0
	}
	for _, id := range ids {
		f := &s.files[id]
		f.commits++
		f.gone = removed[s.paths[id]]
		s.add(&f.weight, weight, when)
		if f.authors == nil {
			f.authors = map[int32]*pairStats{}
		}
		s.bump(f.authors, rec.author, weight, when, s.opt.Authors)
		f.log = append(f.log, slot)
		rec.refs++
		if len(f.log) > s.opt.LogLen {
			s.unref(f.log[0])
			f.log = slices.Delete(f.log, 0, 1)
		}
	}
	if n := len(ids); n >= 2 && n <= s.opt.MaxFiles {
		c := 1 / float64(n-1)
		for _, a := range ids {
			f := &s.files[a]
			if f.partners == nil {
				f.partners = map[int32]*pairStats{}
			}
			for _, b := range ids {
				if a != b {
					s.bump(f.partners, b, c, when, s.opt.Partners)
				}
			}
		}
	}
}

// bump adds c at time when to the entry of key in m, dropping the
// lighter half of m when it grows past twice its bound. The bound is
// applied at the same points whichever way the commits were split among
// calls of Add, so results do not depend on the split.
func (s *Stats) bump(m map[int32]*pairStats, key int32, c float64, when int64, bound int) {
	e := m[key]
	if e == nil {
		if len(m) >= 2*bound {
			s.prune(m, bound)
		}
		e = &pairStats{}
		m[key] = e
	}
	e.count++
	s.add(&e.weight, c, when)
}

// prune keeps the bound heaviest entries of m (weights as of the newest
// commit; then the most counted; then the first seen).
func (s *Stats) prune(m map[int32]*pairStats, bound int) {
	for _, x := range s.ranked(m, s.newest, nil, cmp.Compare[int32])[bound:] {
		delete(m, x.key)
	}
}

// weighed is an entry of a file's partners or authors as of a time.
type weighed struct {
	key    int32
	count  int
	weight float64
	last   int64
}

// ranked returns the entries of m that keep accepts (all for nil keep)
// weighed as of t, heaviest first, then the most counted, then as tie
// orders their keys.
func (s *Stats) ranked(m map[int32]*pairStats, t int64, keep func(int32) bool, tie func(a, b int32) int) []weighed {
	out := make([]weighed, 0, len(m))
	for k, e := range m {
		if keep == nil || keep(k) {
			out = append(out, weighed{k, int(e.count), s.at(e.weight, t), e.weight.last})
		}
	}
	slices.SortFunc(out, func(a, b weighed) int {
		if c := cmp.Compare(b.weight, a.weight); c != 0 {
			return c
		}
		if c := cmp.Compare(b.count, a.count); c != 0 {
			return c
		}
		return tie(a.key, b.key)
	})
	return out
}

// unref forgets a commit once no file's log holds it.
func (s *Stats) unref(slot int32) {
	rec := &s.commits[slot]
	rec.refs--
	if rec.refs <= 0 {
		*rec = commitRec{author: -1, when: rec.when}
	}
}

// rename moves the history of from to to: the file's commits, partners,
// authors and log now answer for its new name. A file that was at to
// before (removed since) is forgotten.
func (s *Stats) rename(from, to string) {
	id, ok := s.pathID[from]
	if !ok || from == to {
		return
	}
	if old, ok := s.pathID[to]; ok {
		s.forget(old)
	}
	delete(s.pathID, from)
	s.pathID[to] = id
	s.paths[id] = to
}

// forget drops what is known of the file id (its name is kept for the
// commits that named it, but it no longer appears as a partner).
func (s *Stats) forget(id int32) {
	delete(s.pathID, s.paths[id])
	for _, slot := range s.files[id].log {
		s.unref(slot)
	}
	s.files[id] = fileStats{gone: true}
}

// Cochange is a file that changed together with another.
type Cochange struct {
	Path   string    `json:"path,omitempty"`
	Count  int       `json:"count,omitempty"`  // commits that changed both (within MaxFiles)
	Weight float64   `json:"weight,omitempty"` // their decayed, size-weighted sum
	Last   time.Time `json:"last,omitzero"`    // the newest of them
}

// Expert is an author of a file.
type Expert struct {
	Author  string    `json:"author,omitempty"`
	Email   string    `json:"email,omitempty"`
	Commits int       `json:"commits,omitempty"` // commits to the file
	Weight  float64   `json:"weight,omitempty"`  // their decayed sum
	Last    time.Time `json:"last,omitzero"`     // the newest of them
}

// FileStats is what is known of one file.
type FileStats struct {
	Commits int
	Weight  float64
	Last    time.Time
	Gone    bool // the newest commit that touched it removed it
}

func (s *Stats) ref(now time.Time) int64 {
	if now.IsZero() {
		return s.newest
	}
	return now.Unix()
}

// File returns what is known of path as of now (the zero time for the
// newest commit added).
func (s *Stats) File(path string, now time.Time) (FileStats, bool) {
	id, ok := s.pathID[path]
	if !ok {
		return FileStats{}, false
	}
	f := &s.files[id]
	return FileStats{
		Commits: int(f.commits),
		Weight:  s.at(f.weight, s.ref(now)),
		Last:    unixTime(f.weight.last),
		Gone:    f.gone,
	}, true
}

// Cochange returns the k files (all for k <= 0) that changed most with
// path, heaviest first as of now; the zero time stands for the date of
// the newest commit added, which makes answers reproducible. Files since
// removed are left out.
func (s *Stats) Cochange(path string, k int, now time.Time) []Cochange {
	id, ok := s.pathID[path]
	if !ok {
		return nil
	}
	ws := s.ranked(s.files[id].partners, s.ref(now),
		func(p int32) bool { return !s.files[p].gone },
		func(a, b int32) int { return strings.Compare(s.paths[a], s.paths[b]) })
	if k > 0 && len(ws) > k {
		ws = ws[:k]
	}
	var out []Cochange
	for _, w := range ws {
		out = append(out, Cochange{Path: s.paths[w.key], Count: w.count, Weight: w.weight, Last: unixTime(w.last)})
	}
	return out
}

// Experts returns the authors of path, heaviest first as of now (the zero
// time for the newest commit added). Authors are told apart by e-mail
// address, in lower case; the name is the one of their newest commit.
func (s *Stats) Experts(path string, now time.Time) []Expert {
	id, ok := s.pathID[path]
	if !ok {
		return nil
	}
	ws := s.ranked(s.files[id].authors, s.ref(now), nil,
		func(a, b int32) int { return strings.Compare(s.authors[a].email, s.authors[b].email) })
	var out []Expert
	for _, w := range ws {
		a := s.authors[w.key]
		out = append(out, Expert{Author: a.name, Email: a.email, Commits: w.count, Weight: w.weight, Last: unixTime(w.last)})
	}
	return out
}

// Log returns up to k (all kept, LogLen, for k <= 0) of the commits that
// touched path, the most recently added first. Their Files name the
// files as they are called now (after renames).
func (s *Stats) Log(path string, k int) []Commit {
	id, ok := s.pathID[path]
	if !ok {
		return nil
	}
	log := s.files[id].log
	var out []Commit
	for i := len(log) - 1; i >= 0 && (k <= 0 || len(out) < k); i-- {
		rec := &s.commits[log[i]]
		files := make([]string, len(rec.files))
		for j, f := range rec.files {
			files[j] = s.paths[f]
		}
		a := s.authors[rec.author]
		out = append(out, Commit{
			Hash:    rec.hash,
			Author:  a.name,
			Email:   a.email,
			When:    unixTime(rec.when),
			Subject: rec.subject,
			Files:   files,
		})
	}
	return out
}
