package mem

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/oklog/ulid/v2"
	"go.yaml.in/yaml/v3"
)

// This file decides how two versions of the store come together (see
// "Merging" in doc.go): entry by entry, never with conflict markers, and
// never losing a version.

// MergeGroup is what a merge knows of one entry, or of one file that is not
// an entry: its files as they were at the merge base and as they are on
// each side, by path (a path missing from a map is absent on that side).
// Paths lists every path any side changed; Base, Ours and Theirs hold
// those paths only.
type MergeGroup struct {
	// ID is the entry's id, "" for a file that is not an entry (one path).
	ID                 string
	Paths              []string
	Base, Ours, Theirs map[string][]byte
	// OursTime and TheirsTime are when each side last changed (its
	// newest commit): the time of an edit that did not set updated_at.
	OursTime, TheirsTime time.Time
}

// Decision is a choice a merge made where both sides had changed the same
// entry differently; it is reported and written into the merge commit.
type Decision struct {
	ID    string `json:"id,omitempty"`
	Path  string `json:"path"`
	Kind  string `json:"kind,omitempty"`
	Scope string `json:"scope,omitempty"`
	// Rule names the rule applied: fields, edit-edit, edit-forget,
	// edit-remove, remove, derived or file.
	Rule string `json:"rule"`
	// Kept says whose version stands at the id: ours, theirs or both.
	Kept string `json:"kept"`
	// Copy is the id of the new tombstone that keeps the other version's
	// text, with replaced_by set to ID.
	Copy string `json:"copy,omitempty"`
	// Fields are the front matter fields both sides set differently.
	Fields []string `json:"fields,omitempty"`
	// Note says what happened in words.
	Note string `json:"note"`
}

// String is the decision as one line of a merge commit's body.
func (d Decision) String() string {
	who := d.ID
	if who == "" {
		who = d.Path
	}
	return fmt.Sprintf("%s %s: %s", d.Rule, who, d.Note)
}

// MergeResult is the outcome for one group: the content every path of the
// group should have afterwards (a path left out is absent), including new
// paths (the copy of a version that lost its place), and the decision, nil
// when the merge was plain (one side changed, or both the same way).
type MergeResult struct {
	Files    map[string][]byte
	Decision *Decision
}

// side is one side's version of an entry: its main file (the live one
// when there is one) parsed.
type side struct {
	path string
	data []byte
	e    *Entry
	time time.Time // when this version was made
	name string    // ours or theirs
}

// Merge decides one group by the rules of doc.go. The result depends only
// on the three versions and the two times, not on which side is ours: two
// stores that make the same merge make the same files, new ids included.
func Merge(g MergeGroup) (MergeResult, error) {
	changedO, changedT := !sameFiles(g.Base, g.Ours), !sameFiles(g.Base, g.Theirs)
	if res, ok, err := removedByHand(g, changedO, changedT); ok || err != nil {
		return res, err
	}
	switch {
	case !changedT, sameFiles(g.Ours, g.Theirs):
		return MergeResult{Files: g.Ours}, nil
	case !changedO:
		return MergeResult{Files: g.Theirs}, nil
	}
	o := primary(g.Ours, "ours", g.OursTime)
	t := primary(g.Theirs, "theirs", g.TheirsTime)
	b := primary(g.Base, "base", time.Time{})
	if g.ID == "" || (o != nil && o.e == nil) || (t != nil && t.e == nil) {
		return mergeFiles(g, o, t), nil
	}
	switch {
	case o == nil:
		return keepSide(g, t, "edit-remove", "removed here without a tombstone, changed there: the changed version stays"), nil
	case t == nil:
		return keepSide(g, o, "edit-remove", "removed there without a tombstone, changed here: the changed version stays"), nil
	}
	o.time, t.time = changeTime(o, b), changeTime(t, b)
	if o.e.Kind == KindSummary || t.e.Kind == KindSummary {
		w := later(o, t)
		return keepSide(g, w, "derived", fmt.Sprintf("a summary changed on both sides: the newer (%s) stands, the other stays in history; the next mira-summarize builds on it", w.name)), nil
	}
	if oLive, tLive := !o.e.Deleted(), !t.e.Deleted(); oLive != tLive {
		live, dead := o, t
		if tLive {
			live, dead = t, o
		}
		what := "forgotten"
		if dead.e.ReplacedBy != "" {
			what = "replaced by " + dead.e.ReplacedBy
		}
		note := fmt.Sprintf("edited on one side (%s), %s on the other (%s, reason %q): the edit survives and the entry stays live", live.name, what, dead.name, dead.e.DeletedReason)
		res := MergeResult{Files: map[string][]byte{live.path: live.data}}
		res.Decision = decision(g, live, "edit-forget", live.name, note)
		return res, nil
	}
	return mergeFields(g, b, o, t)
}

// removedByHand decides an entry whose files a side removed without a
// tombstone (a plain git rm, or a file deleted by hand and committed) while
// the other side left it as it was: rather than vanish from the store, the
// entry becomes a tombstone, as mira-forget would have made it. The
// tombstone keeps the last version, deleted_at is the removing side's time
// and deleted_reason says where it was removed. ok is false for every other
// case.
func removedByHand(g MergeGroup, changedO, changedT bool) (res MergeResult, ok bool, err error) {
	if g.ID == "" || changedO == changedT {
		return MergeResult{}, false, nil
	}
	removing, kept, name, at, where := g.Theirs, g.Ours, "theirs", g.TheirsTime, "on the remote"
	if changedO {
		removing, kept, name, at, where = g.Ours, g.Theirs, "ours", g.OursTime, "in this store"
	}
	b := primary(kept, "base", time.Time{})
	if len(removing) > 0 || b == nil || b.e == nil || b.e.Deleted() {
		return MergeResult{}, false, nil
	}
	t := *b.e
	t.meta = cloneNode(b.e.meta)
	t.implicit = nil
	t.DeletedAt = at.UTC().Truncate(time.Second)
	if t.DeletedAt.IsZero() {
		t.DeletedAt = t.CreatedAt
	}
	t.DeletedReason = "removed " + where + " without a tombstone (git rm or a hand edit); kept by mira-sync"
	t.Path = DeletedPath(b.path)
	if t.Path == b.path {
		return MergeResult{}, false, nil // not in the entries layout: no deleted/ to move it to
	}
	data, err := t.Marshal()
	if err != nil {
		return MergeResult{}, true, fmt.Errorf("tombstone of %s: %w", g.ID, err)
	}
	res.Files = map[string][]byte{t.Path: data}
	res.Decision = decision(g, &side{path: t.Path, e: &t}, "remove", name,
		fmt.Sprintf("removed %s without a tombstone: kept as a tombstone at %s", where, t.Path))
	return res, true, nil
}

// mergeFields merges two versions of an entry that are both live (or both
// tombstones) field by field: a field (or the body) changed on one side
// only takes that side's value; one changed on both sides differently takes
// the newer side's value, except that tags are joined, and updated_at and
// deleted_at take the later time. When the bodies conflict, the older
// body is kept as a new tombstone that names the kept entry in replaced_by.
func mergeFields(g MergeGroup, b, o, t *side) (MergeResult, error) {
	w, l := later(o, t), o
	if w == o {
		l = t
	}
	var bm *yaml.Node
	bBody, bPath := "", ""
	if b != nil && b.e != nil && b.e.Deleted() == o.e.Deleted() {
		bm, bBody, bPath = b.e.meta, b.e.Body, b.path
	}
	m := cloneNode(w.e.meta)
	var conflicts []string
	keys := metaKeys(w.e.meta, l.e.meta, bm)
	for _, k := range keys {
		vw, vl, vb := metaGetOr(w.e.meta, k), metaGetOr(l.e.meta, k), metaGetOr(bm, k)
		switch {
		case eqNode(vw, vl), eqNode(vb, vl):
			continue // the winner's value stands
		case eqNode(vb, vw):
			metaSet(m, k, cloneOrNil(vl))
			continue
		}
		switch k {
		case "updated_at", "deleted_at":
			tw, _ := scalarTime(vw)
			tl, _ := scalarTime(vl)
			if tl.After(tw) {
				metaSet(m, k, cloneOrNil(vl))
			}
		case "tags":
			tw, _ := stringList(w.e.meta, "tags")
			tl, _ := stringList(l.e.meta, "tags")
			all := slices.Clone(tw)
			for _, x := range tl {
				if !slices.Contains(all, x) {
					all = append(all, x)
				}
			}
			metaSet(m, k, listNode(all))
			conflicts = append(conflicts, k)
		default:
			conflicts = append(conflicts, k)
		}
	}
	body := w.e.Body
	bodyConflict := false
	switch {
	case o.e.Body == t.e.Body, bPath != "" && l.e.Body == bBody:
	case bPath != "" && w.e.Body == bBody:
		body = l.e.Body
	default:
		bodyConflict = true
	}
	// A file that moved (by hand, to another scope or kind) on one side
	// only keeps its new place.
	where := w.path
	if o.path != t.path && bPath != "" {
		switch bPath {
		case o.path:
			where = t.path
		case t.path:
			where = o.path
		}
	}
	data, err := render(m, body)
	if err != nil {
		return MergeResult{}, fmt.Errorf("merge %s: %w", g.ID, err)
	}
	res := MergeResult{Files: map[string][]byte{where: data}}
	if !bodyConflict && len(conflicts) == 0 {
		return res, nil // changes to different fields: nothing to decide
	}
	rule, note := "fields", fmt.Sprintf("both sides changed %s: the newer (%s) values stand", strings.Join(conflicts, ", "), w.name)
	d := decision(g, w, rule, w.name, note)
	d.Fields = conflicts
	if bodyConflict {
		cp, cpath, cdata, err := loserCopy(g.ID, w, l)
		if err != nil {
			return MergeResult{}, err
		}
		res.Files[cpath] = cdata
		d.Rule, d.Kept, d.Copy = "edit-edit", "both", cp
		d.Note = fmt.Sprintf("text edited on both sides: the newer (%s) stays at %s, the other (%s) is kept as tombstone %s replaced by it", w.name, g.ID, l.name, cp)
		if len(conflicts) > 0 {
			d.Note += "; fields " + strings.Join(conflicts, ", ") + " from the newer"
		}
	}
	res.Decision = d
	return res, nil
}

// loserCopy makes the tombstone that keeps the older version's text: a new
// entry whose id is derived from the entry's id and that version's bytes
// (so the same merge made twice makes the same file), created when that
// version was made, under deleted/ with replaced_by naming the kept entry.
func loserCopy(id string, w, l *side) (string, string, []byte, error) {
	sum := sha256.Sum256(append([]byte(id+"\x00"), l.data...))
	made := l.time.UTC().Truncate(time.Second)
	if made.IsZero() {
		made = l.e.CreatedAt
	}
	nid, err := ulid.New(ulid.Timestamp(made), bytes.NewReader(sum[:]))
	if err != nil {
		return "", "", nil, fmt.Errorf("copy of %s: %w", id, err)
	}
	c := *l.e
	c.meta = cloneNode(l.e.meta)
	c.implicit = nil
	c.ID = nid.String()
	c.CreatedAt = made
	c.ReplacedBy = id
	c.DeletedAt = later(w, l).time.UTC().Truncate(time.Second)
	c.DeletedReason = "merge: edited on both sides; replaced by the newer version"
	c.Path = DeletedPath(path.Join(path.Dir(l.path), FileName(made, c.ID)))
	if l.e.Deleted() {
		c.Path = path.Join(path.Dir(l.path), FileName(made, c.ID))
	}
	data, err := c.Marshal()
	if err != nil {
		return "", "", nil, fmt.Errorf("copy of %s: %w", id, err)
	}
	return c.ID, c.Path, data, nil
}

// mergeFiles decides a file that is not an entry, or an entry file that
// does not parse on some side: a version that still exists beats a
// removal; when both sides changed it, ours stands and theirs stays in
// history (the merge commit's second parent).
func mergeFiles(g MergeGroup, o, t *side) MergeResult {
	if o == nil && t != nil {
		return keepSide(g, t, "edit-remove", "removed here, changed there: the changed version stays")
	}
	if t == nil && o != nil {
		return keepSide(g, o, "edit-remove", "removed there, changed here: the changed version stays")
	}
	files := maps.Clone(g.Ours)
	for p, d := range g.Theirs {
		if _, ok := files[p]; !ok {
			files[p] = d // a path only theirs has is kept too
		}
	}
	res := MergeResult{Files: files}
	res.Decision = decision(g, o, "file", "ours", "changed on both sides and not mergeable entry by entry: this store's version stands, the other's is in the merge commit's second parent")
	return res
}

// keepSide takes every file of one side for the group.
func keepSide(g MergeGroup, s *side, rule, note string) MergeResult {
	files := g.Ours
	if s.name == "theirs" {
		files = g.Theirs
	}
	return MergeResult{Files: files, Decision: decision(g, s, rule, s.name, note)}
}

func decision(g MergeGroup, s *side, rule, kept, note string) *Decision {
	d := &Decision{ID: g.ID, Rule: rule, Kept: kept, Note: note}
	if s != nil {
		d.Path = s.path
		if s.e != nil {
			d.Kind, d.Scope = s.e.Kind, s.e.Scope
		}
	}
	if d.Path == "" && len(g.Paths) > 0 {
		d.Path = g.Paths[0]
	}
	return d
}

// primary picks a side's main file: the live one when there is one, else
// a tombstone, in path order; nil when the side has none.
func primary(files map[string][]byte, name string, at time.Time) *side {
	var best *side
	for _, p := range slices.Sorted(maps.Keys(files)) {
		s := &side{path: p, data: files[p], name: name, time: at}
		if e, err := Parse(p, files[p]); err == nil {
			s.e = e
		}
		if best == nil || (best.e == nil || best.e.Deleted()) && s.e != nil && !s.e.Deleted() {
			best = s
		}
	}
	return best
}

// changeTime is when a side's version was made: its updated_at (or
// deleted_at) when the side set a newer one than the base had, else the
// time of the side's newest commit (a hand edit seldom sets updated_at).
func changeTime(s, b *side) time.Time {
	t := newest(s.e)
	if b != nil && b.e != nil && !t.After(newest(b.e)) {
		t = time.Time{}
	}
	if t.IsZero() {
		return s.time
	}
	return t
}

func newest(e *Entry) time.Time {
	if e.DeletedAt.After(e.UpdatedAt) {
		return e.DeletedAt
	}
	return e.UpdatedAt
}

// later returns the newer side; equal times are broken by the bytes, so
// that both stores choose alike.
func later(a, b *side) *side {
	switch {
	case a.time.After(b.time):
		return a
	case b.time.After(a.time):
		return b
	case bytes.Compare(a.data, b.data) >= 0:
		return a
	}
	return b
}

func sameFiles(a, b map[string][]byte) bool {
	if len(a) != len(b) {
		return false
	}
	for p, d := range a {
		if e, ok := b[p]; !ok || !bytes.Equal(d, e) {
			return false
		}
	}
	return true
}

// metaKeys lists the keys of the mappings, each once, in order of first
// appearance.
func metaKeys(ms ...*yaml.Node) []string {
	var keys []string
	seen := map[string]bool{}
	for _, m := range ms {
		if m == nil {
			continue
		}
		for i := 0; i+1 < len(m.Content); i += 2 {
			if k := m.Content[i].Value; !seen[k] {
				seen[k] = true
				keys = append(keys, k)
			}
		}
	}
	return keys
}

func metaGetOr(m *yaml.Node, key string) *yaml.Node {
	if m == nil {
		return nil
	}
	return metaGet(m, key)
}

func eqNode(a, b *yaml.Node) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return sameValue(a, b)
}

func cloneOrNil(n *yaml.Node) *yaml.Node {
	if n == nil {
		return nil
	}
	return cloneNode(n)
}

func scalarTime(n *yaml.Node) (time.Time, error) {
	if n == nil || n.Kind != yaml.ScalarNode {
		return time.Time{}, fmt.Errorf("not a time")
	}
	return ParseTime(n.Value)
}

// render writes front matter and body as Marshal does.
func render(m *yaml.Node, body string) ([]byte, error) {
	yml, err := encodeMeta(m)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	buf.WriteString("---\n")
	buf.Write(yml)
	buf.WriteString("---\n")
	if body != "" {
		buf.WriteString(body)
		buf.WriteByte('\n')
	}
	return buf.Bytes(), nil
}
