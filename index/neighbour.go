package index

import (
	"slices"
	"strings"

	"github.com/miramem/mira/mem"
)

// A conversation turn's index entry carries the text of the turn before it
// in its scope (Doc.Context), because a question is often asked in the
// words of the turn an answer replies to: "When did Caroline go to the
// support group?" is answered by "I went yesterday", after a turn that
// asked about the group. On LoCoMo (dev) this alone lifted BM25 recall@5
// from 0.548 to 0.633 and recall@10 from 0.619 to 0.721; the turn after,
// tried too, added little and would make every new turn change the index
// entry of the one before.
//
// Turns are ordered within their scope as mem.ComparePaths orders them:
// by file name, which is <created>__<id>.md, so by creation time and then
// id, across the role directories.

// TurnKey returns the scope of a conversation turn's path and the key that
// orders the scope's turns; ok is false for any other path. A turn here is
// a live file right in a role's directory, entries/<scope>/turns/<role>/.
func TurnKey(p string) (scope, key string, ok bool) {
	ep, err := mem.ParsePath(p)
	if err != nil || ep.Deleted || ep.Kind != mem.KindTurn || ep.Role == "" || ep.Shard != "" {
		return "", "", false
	}
	return ep.Scope, ep.Name, true
}

// TurnOrder orders conversation turns within their scopes, so that each
// turn's previous one can be found.
type TurnOrder struct {
	byScope map[string][]string // sorted by mem.ComparePaths
}

// NewTurnOrder orders the turn paths given (of any scopes, in any order);
// other paths are ignored.
func NewTurnOrder(paths []string) *TurnOrder {
	o := &TurnOrder{byScope: map[string][]string{}}
	for _, p := range paths {
		if s, _, ok := TurnKey(p); ok {
			o.byScope[s] = append(o.byScope[s], p)
		}
	}
	for _, ts := range o.byScope {
		slices.SortFunc(ts, mem.ComparePaths)
	}
	return o
}

// Previous returns the turn right before p in p's scope ("" for the first
// turn, or a path that is not a turn). p itself need not be in the order.
func (o *TurnOrder) Previous(p string) string {
	scope, _, ok := TurnKey(p)
	if !ok {
		return ""
	}
	ts := o.byScope[scope]
	i, _ := slices.BinarySearchFunc(ts, p, mem.ComparePaths)
	if i == 0 {
		return ""
	}
	return ts[i-1]
}

// next returns the turn right after p in p's scope, or "".
func (o *TurnOrder) next(p string) string {
	scope, _, ok := TurnKey(p)
	if !ok {
		return ""
	}
	ts := o.byScope[scope]
	i, found := slices.BinarySearchFunc(ts, p, mem.ComparePaths)
	if found {
		i++
	}
	if i < len(ts) {
		return ts[i]
	}
	return ""
}

// addDependents adds to the files to load the turns whose context changes
// with this update: the turn after each turn that is added, changed or
// removed. Without it a forgotten turn's text would stay findable through
// the index entry of the turn after it. Only the scopes with a changed
// turn are looked at.
func addDependents(ch *changes, man manifest, now int64) {
	var changed, prefixes []string
	removed, loading := map[string]bool{}, map[string]bool{}
	note := func(p string) {
		if s, _, ok := TurnKey(p); ok {
			changed = append(changed, p)
			if pre := mem.KindDir(s, mem.KindTurn) + "/"; !slices.Contains(prefixes, pre) {
				prefixes = append(prefixes, pre)
			}
		}
	}
	for _, o := range ch.load {
		loading[o.Path] = true
		note(o.Path)
	}
	for _, p := range ch.remove {
		removed[p] = true
		note(p)
	}
	if len(changed) == 0 {
		return
	}
	// The scopes' turns as indexed, plus the new ones; the removed ones
	// stay in the order so that their successors are found.
	var turns []string
	for p := range man {
		for _, pre := range prefixes {
			if strings.HasPrefix(p, pre) {
				turns = append(turns, p)
				break
			}
		}
	}
	for _, o := range ch.load {
		if _, indexed := man[o.Path]; !indexed {
			turns = append(turns, o.Path)
		}
	}
	order := NewTurnOrder(turns)
	for _, p := range changed {
		for next := order.next(p); next != ""; next = order.next(next) {
			if removed[next] {
				continue
			}
			if !loading[next] {
				if e, ok := man[next]; ok && e.broken == "" {
					ch.load = append(ch.load, obs{FileStat: FileStat{Path: next, Size: e.size, ModTime: e.mtime}, seen: now})
					loading[next] = true
				}
			}
			break
		}
	}
}
