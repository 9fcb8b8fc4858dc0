package summarize

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/miramem/mira/mem"
)

// Front matter fields of a summary beyond the ones mem knows.
const (
	fieldCovers       = "covers"
	fieldCoversFrom   = "covers_from"
	fieldCoversUntil  = "covers_until"
	fieldDetail       = "detail"
	fieldModel        = "model"
	fieldInputTokens  = "input_tokens"
	fieldOutputTokens = "output_tokens"
)

// Extractive is the model name recorded for summaries written by the
// built-in extractive summarizer.
const Extractive = "extractive"

// Source is the source field of summaries.
const Source = "summarize"

// ReasonEvicted is the deleted_reason of entries removed by eviction.
const ReasonEvicted = "evicted"

// DefaultKinds are the kinds of memory that are summarized: the
// conversation and the facts drawn from it.
var DefaultKinds = []string{mem.KindTurn, mem.KindFact}

// evictable kinds: only turns and facts are ever evicted.
var evictable = []string{mem.KindTurn, mem.KindFact}

// State is what a scope's summaries cover: the summaries to show, oldest
// first, and every turn or fact none of them covers. A prompt made of
// Summaries followed by Buffer leaves nothing out.
type State struct {
	Scope string
	// Summaries are the top-level summaries: the scope's L3 (if any)
	// followed by newer L1/L2 summaries not folded into it yet. Usually
	// exactly one.
	Summaries []*mem.Entry
	// Latest is the rolling summary: the L3, or the newest summary when
	// there is no L3; nil when the scope has no summary.
	Latest *mem.Entry
	// Watermark is the creation time of the newest turn or fact the
	// summaries cover (zero without summaries). Normally every entry of
	// Buffer is newer; one imported with an older time is in Buffer too.
	Watermark time.Time
	// Buffer holds the live turns and facts no summary covers, oldest first.
	Buffer []*mem.Entry
}

// Load returns the summary state of a scope, for assembling a prompt
// (latest summary plus every turn since). It reads only the scope's
// directory and takes no lock. kinds names the kinds of material (nil:
// DefaultKinds). Files that do not parse are passed to bad, if not nil, and
// skipped.
func Load(st *mem.Store, scope string, kinds []string, bad func(error)) (*State, error) {
	if kinds == nil {
		kinds = DefaultKinds
	}
	d, err := loadScope(st, scope, kinds, bad)
	if err != nil {
		return nil, err
	}
	return d.state(), nil
}

// Summaries returns a scope's top-level summaries, as in State.Summaries:
// its L3 followed by newer L1/L2 summaries not folded into it yet. It reads
// only the scope's summaries/ directory, so it is cheap enough to run for
// every prompt, however large the scope.
func Summaries(st *mem.Store, scope string, bad func(error)) ([]*mem.Entry, error) {
	d, err := loadDir(st, scope, mem.KindSummary, nil, bad)
	if err != nil {
		return nil, err
	}
	return d.topLevel(), nil
}

// Scopes lists the scopes of the store, sorted.
//
// Deprecated: use the store's own Scopes method.
func Scopes(st *mem.Store) ([]string, error) { return st.Scopes() }

// scopeData is everything a run needs to know about one scope.
type scopeData struct {
	scope     string
	kinds     []string
	live      int          // live entries of every kind
	summaries []*mem.Entry // live summaries, by (created_at, id)
	material  []*mem.Entry // live turns and facts (of kinds), by (created_at, id)
	others    []*mem.Entry // every other live entry
	coveredBy map[string]string
}

// byKey orders entries by creation time, then id: the order of the
// conversation.
func byKey(a, b *mem.Entry) int {
	return cmp.Or(a.CreatedAt.Compare(b.CreatedAt), strings.Compare(a.ID, b.ID))
}

// loadScope reads every live entry of a scope. It reads the scope's own
// directory (not the whole store) and skips its deleted/ directory.
func loadScope(st *mem.Store, scope string, kinds []string, bad func(error)) (*scopeData, error) {
	return loadDir(st, scope, "", kinds, bad)
}

// loadDir reads the live entries of a scope's kind ("" for every kind).
// Files whose front matter does not parse go to bad; a file that cannot be
// read at all fails the load.
func loadDir(st *mem.Store, scope, kind string, kinds []string, bad func(error)) (*scopeData, error) {
	if err := mem.ValidScope(scope); err != nil {
		return nil, err
	}
	paths, err := st.Paths(scope, kind)
	if err != nil {
		return nil, fmt.Errorf("read scope %s: %w", scope, err)
	}
	var readErr error
	entries := st.ReadAll(paths, func(err error) {
		var pe *mem.ParseError
		switch {
		case errors.As(err, &pe):
			if bad != nil {
				bad(err)
			}
		case readErr == nil:
			readErr = err
		}
	})
	if readErr != nil {
		return nil, fmt.Errorf("read scope %s: %w", scope, readErr)
	}
	d := &scopeData{scope: scope, kinds: kinds, coveredBy: map[string]string{}}
	for _, e := range entries {
		if e.Deleted() {
			continue
		}
		d.live++
		switch {
		case e.Kind == mem.KindSummary:
			d.summaries = append(d.summaries, e)
		case slices.Contains(kinds, e.Kind):
			d.material = append(d.material, e)
		default:
			d.others = append(d.others, e)
		}
	}
	slices.SortFunc(d.summaries, byKey)
	slices.SortFunc(d.material, byKey)
	for _, s := range d.summaries {
		if s.Level != "L1" {
			continue
		}
		for _, id := range covers(s) {
			if _, dup := d.coveredBy[id]; !dup {
				d.coveredBy[id] = s.ID
			}
		}
	}
	return d, nil
}

// buffer returns the material no L1 covers, oldest first.
func (d *scopeData) buffer() []*mem.Entry {
	var out []*mem.Entry
	for _, m := range d.material {
		if _, ok := d.coveredBy[m.ID]; !ok {
			out = append(out, m)
		}
	}
	return out
}

// latestL3 returns the newest live L3, or nil.
func (d *scopeData) latestL3() *mem.Entry {
	for i := len(d.summaries) - 1; i >= 0; i-- {
		if d.summaries[i].Level == "L3" {
			return d.summaries[i]
		}
	}
	return nil
}

// topLevel returns the summaries a reader shows: the latest L3, then the
// L1 and L2 summaries newer than it that no live L2 groups.
func (d *scopeData) topLevel() []*mem.Entry {
	l3 := d.latestL3()
	grouped := map[string]bool{}
	for _, s := range d.summaries {
		if s.Level == "L2" {
			for _, id := range covers(s) {
				grouped[id] = true
			}
		}
	}
	var out []*mem.Entry
	if l3 != nil {
		out = append(out, l3)
	}
	for _, s := range d.summaries {
		if s.Level == "L3" || grouped[s.ID] || (l3 != nil && byKey(s, l3) <= 0) {
			continue
		}
		if s.Level != "L1" && s.Level != "L2" {
			continue // a hand-made summary without a level is not part of the tree
		}
		out = append(out, s)
	}
	return out
}

func (d *scopeData) state() *State {
	s := &State{Scope: d.scope, Summaries: d.topLevel(), Buffer: d.buffer()}
	if len(s.Summaries) > 0 {
		s.Latest = s.Summaries[0]
		if s.Latest.Level != "L3" {
			s.Latest = s.Summaries[len(s.Summaries)-1]
		}
	}
	for _, t := range s.Summaries {
		if w := coversUntil(t); w.After(s.Watermark) {
			s.Watermark = w
		}
	}
	return s
}

// lastSummaryTime is the creation time of the scope's newest summary.
func (d *scopeData) lastSummaryTime() time.Time {
	var t time.Time
	for _, s := range d.summaries {
		if s.CreatedAt.After(t) {
			t = s.CreatedAt
		}
	}
	return t
}

// covers returns the ids listed in a summary's covers field.
func covers(e *mem.Entry) []string {
	v := e.Fields()[fieldCovers]
	switch x := v.(type) {
	case []any:
		out := make([]string, 0, len(x))
		for _, id := range x {
			if s, ok := id.(string); ok && s != "" {
				out = append(out, s)
			}
		}
		return out
	case []string:
		return x
	case string:
		return strings.Fields(strings.ReplaceAll(x, ",", " "))
	}
	return nil
}

// coversUntil returns a summary's watermark, zero when it has none.
func coversUntil(e *mem.Entry) time.Time {
	return timeField(e, fieldCoversUntil)
}

func timeField(e *mem.Entry, key string) time.Time {
	switch x := e.Fields()[key].(type) {
	case string:
		if t, err := mem.ParseTime(x); err == nil {
			return t
		}
	case time.Time:
		return x
	}
	return time.Time{}
}
