package mira

import (
	"context"
	"hash/fnv"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/miramem/mira/code"
	"github.com/miramem/mira/internal/text"
	"github.com/miramem/mira/mem"
)

// Memories meet code: a memory that names a file ("mem/store.go"), a
// place ("mem/store.go:291") or a definition of the index is linked to
// that code. A definition is named by a distinctive word: one with an
// upper-case letter after its first ("DetectProject"), an underscore
// ("parse_config"), a qualified form ("Store.Head", "mem.DetectProject",
// "http::Client"), or any name in backticks ("`route`"); plain words
// would link every memory that says "open" to every Open. Paths are
// relative to the project's root.
//
// Finding the links must stay cheap on every read, so the store is never
// read whole: a read looks at the memories recalled for its own text
// (codeRecallK of them) and at the newest codeScanK of the store, kept
// until the store's head moves, and each memory's links are kept until
// its text changes or an update changes the index.
const (
	codeRecallK = 20
	codeScanK   = 200
	// codeScanWeight is the boost of a memory that points at code but was
	// not recalled for the request: it is about the project, not this
	// request, so it only tips the balance.
	codeScanWeight = 0.25
	// maxLinkWords bounds the words of one memory looked up in the index.
	maxLinkWords = 32
	// maxWhyMemories is how many of the memories pointing at a touchpoint
	// its reasons name; the rest are counted (Memories lists them all).
	maxWhyMemories = 3
)

// codeKinds are the kinds of memory that can point at code: knowledge,
// not the conversation's turns or their summaries.
var codeKinds = []string{mem.KindFact, mem.KindPreference, mem.KindDecision, mem.KindCorrection, mem.KindGoal, mem.KindTask, mem.KindNote}

// codeLinks finds what the memories of a store point at in the code of
// one index, and keeps it: the newest memories until the store's head
// moves, each memory's links until its text or the index changes. The
// Code that reads the index holds one; it knows nothing of that Code.
type codeLinks struct {
	memory *Memory
	ix     *code.Index
	root   string                       // the project's root
	gen    *atomic.Uint64               // counts the updates that changed the index
	warn   func(path string, err error) // hears a recall that failed

	mu       sync.Mutex
	targets  map[string][]string // memory id and text hash -> targets
	tgen     uint64              // the index's generation the targets were found at
	scanHead string              // the store's head the scan was made at
	scanned  bool
	scan     []mem.Record
}

// memLink is a memory that points at code.
type memLink struct {
	label   string   // "ID: kind: first line"
	targets []string // "path" or "path#Name"
}

// linkSet is the memories that point at code for one read.
type linkSet struct {
	links []memLink
	boost map[string]float64 // target -> weight
}

// about lists the memories that point at a definition: at it, at a place
// inside it, or at its file.
func (ls *linkSet) about(card code.Card) []string {
	if ls == nil || card.Path == "" {
		return nil
	}
	keys := []string{card.Path, card.Path + "#" + card.Name}
	if card.Parent != "" {
		keys = append(keys, card.Path+"#"+card.Parent+"."+card.Name)
	}
	var out []string
	for _, l := range ls.links {
		for _, t := range l.targets {
			if slices.Contains(keys, t) {
				out = append(out, l.label)
				break
			}
		}
	}
	return out
}

// aboutFile lists the memories that point at a file or at code in it.
func (ls *linkSet) aboutFile(path string) []string {
	if ls == nil {
		return nil
	}
	var out []string
	for _, l := range ls.links {
		for _, t := range l.targets {
			if t == path || strings.HasPrefix(t, path+"#") {
				out = append(out, l.label)
				break
			}
		}
	}
	return out
}

// find returns the memories that point at code for a read about text:
// those recalled for it, and the newest of the store. A memory that
// cannot be recalled is reported through warn; the read goes on without.
func (l *codeLinks) find(ctx context.Context, query string) *linkSet {
	m := l.memory
	ls := &linkSet{boost: map[string]float64{}}
	seen := map[string]bool{}
	add := func(r mem.Record, weight float64) {
		if seen[r.ID] {
			return
		}
		seen[r.ID] = true
		ts := l.targetsOf(r)
		if len(ts) == 0 {
			return
		}
		ls.links = append(ls.links, memLink{label: linkLabel(r), targets: ts})
		for _, t := range ts {
			// Many memories about one definition say no more than one
			// recalled memory does: a boost past 1 would bury every
			// other answer under the most talked-about code.
			ls.boost[t] = min(ls.boost[t]+weight, 1)
		}
	}
	recs, err := m.Recall(ctx, Query{Text: query, K: codeRecallK, Kinds: codeKinds, Mode: "lexical"})
	if err != nil {
		if ctx.Err() == nil {
			l.warn("", err)
		}
	}
	for _, r := range recs {
		add(r, 1)
	}
	for _, r := range l.newest(ctx) {
		add(r, codeScanWeight)
	}
	return ls
}

// newest returns the newest memories of the store that can point at
// code, read again only when the store's head has moved.
func (l *codeLinks) newest(ctx context.Context) []mem.Record {
	m := l.memory
	head := ""
	if m.st != nil {
		head, _ = m.st.Head()
	}
	l.mu.Lock()
	if l.scanned && l.scanHead == head {
		scan := l.scan
		l.mu.Unlock()
		return scan
	}
	l.mu.Unlock()
	recs, err := m.Recall(ctx, Query{Text: "", K: codeScanK, Kinds: codeKinds, Mode: "lexical"})
	if err != nil {
		if ctx.Err() == nil {
			l.warn("", err)
		}
		return nil
	}
	l.mu.Lock()
	l.scan, l.scanHead, l.scanned = recs, head, true
	l.mu.Unlock()
	return recs
}

// linkLabel names a memory in a card and a reason: its id, kind and first
// line.
func linkLabel(r mem.Record) string {
	line, _, _ := strings.Cut(strings.TrimSpace(r.Text), "\n")
	return r.ID + ": " + r.Kind + ": " + text.Shorten(strings.TrimSpace(line), 100)
}

// targetsOf returns what a memory points at, from the cache when its
// text and the index are those it was found with.
func (l *codeLinks) targetsOf(r mem.Record) []string {
	h := fnv.New64a()
	title, _ := r.Extra["title"].(string)
	h.Write([]byte(r.Text + "\x00" + title + "\x00" + strings.Join(r.Tags, "\x00")))
	key := r.ID + "\x00" + strconv.FormatUint(h.Sum64(), 16)
	gen := l.gen.Load()
	l.mu.Lock()
	if l.tgen != gen || l.targets == nil {
		l.targets, l.tgen = map[string][]string{}, gen
	}
	ts, ok := l.targets[key]
	l.mu.Unlock()
	if ok {
		return ts
	}
	ts = l.findTargets(title + "\n" + r.Text + "\n" + strings.Join(r.Tags, " "))
	l.mu.Lock()
	if l.tgen == gen {
		l.targets[key] = ts
	}
	l.mu.Unlock()
	return ts
}

var (
	backticked = regexp.MustCompile("`([^`\n]{1,200})`")
	identRE    = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*((\.|::)[A-Za-z_][A-Za-z0-9_]*)*$`)
	placeRE    = regexp.MustCompile(`^(.+?)(?::(\d+)(?::\d+)?|#L(\d+)(?:-L?\d+)?)$`)
)

// findTargets returns the code a memory's words name: "path",
// "path#Name" (a definition, or the one enclosing a path:line).
func (l *codeLinks) findTargets(s string) []string {
	type word struct {
		w  string
		bt bool
	}
	var words []word
	for _, m := range backticked.FindAllStringSubmatch(s, -1) {
		words = append(words, word{strings.TrimSpace(m[1]), true})
	}
	for _, f := range strings.FieldsFunc(s, func(r rune) bool {
		return r == ' ' || r == '\t' || r == '\n' || r == '\r' || strings.ContainsRune(",;()[]{}<>\"'`", r)
	}) {
		words = append(words, word{strings.TrimRight(f, ".:!?"), false})
	}
	var out []string
	seen := map[string]bool{}
	addT := func(t string) {
		if t != "" && !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	looked := 0
	for _, wd := range words {
		w := strings.TrimSuffix(wd.w, "()")
		if len(w) < 3 || seen["\x00"+w] {
			continue
		}
		seen["\x00"+w] = true
		if looked >= maxLinkWords {
			break
		}
		if p, line, sym, ok := l.place(w); ok {
			looked++
			addT(p)
			ref := p + "#" + sym
			if line > 0 {
				ref = p + ":" + strconv.Itoa(line)
			}
			if line > 0 || sym != "" {
				if card, err := l.ix.Card(ref, false); err == nil && card.Name != "" && card.Path == p {
					addT(p + "#" + card.Name)
				}
			}
			continue
		}
		if !identRE.MatchString(w) || !(wd.bt || distinctive(w)) {
			continue
		}
		looked++
		if t := l.symbolTarget(w); t != "" {
			addT(t)
		}
	}
	return out
}

// distinctive reports whether a name is unusual enough to stand for a
// definition outside backticks.
func distinctive(w string) bool {
	if strings.Contains(w, "::") || strings.Contains(w, ".") {
		return true
	}
	if strings.Contains(strings.Trim(w, "_"), "_") {
		return true
	}
	lower, innerUpper := false, false
	for i, r := range w {
		lower = lower || r >= 'a' && r <= 'z'
		innerUpper = innerUpper || i > 0 && r >= 'A' && r <= 'Z'
	}
	return lower && innerUpper // DetectProject, JSONDecoder; not HTTP
}

// place returns the file a word names, relative to the root, the line it
// names in it (0: none) and the definition it names in it ("path#Name").
func (l *codeLinks) place(w string) (p string, line int, sym string, ok bool) {
	p = w
	if m := placeRE.FindStringSubmatch(w); m != nil {
		p = m[1]
		line, _ = strconv.Atoi(m[2] + m[3])
	}
	p, sym, _ = strings.Cut(p, "#")
	if !strings.ContainsAny(p, "/.") {
		return "", 0, "", false
	}
	if filepath.IsAbs(p) {
		r, err := filepath.Rel(l.root, p)
		if err != nil {
			return "", 0, "", false
		}
		p = r
	}
	p = filepath.ToSlash(filepath.Clean(filepath.FromSlash(p)))
	if p == "." || p == ".." || strings.HasPrefix(p, "../") || strings.HasPrefix(p, "/") {
		return "", 0, "", false
	}
	fi, err := os.Stat(filepath.Join(l.root, filepath.FromSlash(p)))
	if err != nil || !fi.Mode().IsRegular() {
		return "", 0, "", false
	}
	return p, line, sym, true
}

// symbolTarget returns "path#Name" for the definition a name stands for,
// "" when the index has none. A qualifier ("Store.Head", "mem.Detect")
// must be the definition's parent, package or file.
func (l *codeLinks) symbolTarget(w string) string {
	parts := strings.FieldsFunc(strings.ReplaceAll(w, "::", "."), func(r rune) bool { return r == '.' })
	if len(parts) == 0 {
		return ""
	}
	name, qual := parts[len(parts)-1], ""
	if len(parts) > 1 {
		qual = parts[len(parts)-2]
	}
	if qual != "" {
		if card, err := l.ix.Card(qual+"."+name, false); err == nil && card.Name == name && card.Path != "" {
			return card.Path + "#" + card.Name
		}
	}
	card, err := l.ix.Card(name, false)
	if err != nil || card.Name != name || card.Path == "" {
		return ""
	}
	if qual != "" && card.Parent != qual && filepath.Base(card.Module) != qual && filepath.Base(filepath.Dir(card.Path)) != qual &&
		strings.TrimSuffix(filepath.Base(card.Path), filepath.Ext(card.Path)) != qual {
		return ""
	}
	return card.Path + "#" + card.Name
}
