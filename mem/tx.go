package mem

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/miramem/mira/internal/gitrepo"
)

// Op is one operation of a change, in the shape --dry-run prints.
type Op struct {
	Op         string `json:"op"` // add, update, delete or none
	ID         string `json:"id"`
	Kind       string `json:"kind,omitempty"`
	Scope      string `json:"scope,omitempty"`
	Path       string `json:"path,omitempty"`
	Text       string `json:"text,omitempty"`
	Reason     string `json:"reason,omitempty"`
	ReplacedBy string `json:"replaced_by,omitempty"`
	Duplicate  string `json:"duplicate_of,omitempty"`
}

// Tx is one change to the store: files written, moved to deleted/ or
// rewritten, then one commit. Until Commit the work tree changes can be
// undone with Rollback; a dry-run Tx records its operations and touches
// nothing.
type Tx struct {
	s       *Store
	dry     bool
	changes []gitrepo.Change
	undo    []func() error
	// Ops lists what the change does, in order.
	Ops []Op
}

// Begin starts a change. The caller holds the store lock (unless dry).
func (s *Store) Begin(dry bool) *Tx { return &Tx{s: s, dry: dry} }

func (tx *Tx) abs(rel string) string { return filepath.Join(tx.s.Root, filepath.FromSlash(rel)) }

// Add writes a new entry. Missing id, creation time and scope are filled in;
// the path is chosen from the layout.
func (tx *Tx) Add(e *Entry) error {
	if e.CreatedAt.IsZero() {
		e.CreatedAt = tx.s.Now().UTC().Truncate(1e9)
	}
	if e.ID == "" {
		e.ID = tx.s.NewID(e.CreatedAt)
	}
	if e.Scope == "" {
		e.Scope = DefaultScope
	}
	if err := Validate(e); err != nil {
		return err
	}
	e.Path = RelPath(e)
	tx.Ops = append(tx.Ops, Op{Op: "add", ID: e.ID, Kind: e.Kind, Scope: e.Scope, Path: e.Path, Text: e.Body})
	if tx.dry {
		return nil
	}
	data, err := e.Marshal()
	if err != nil {
		return fmt.Errorf("memory %s: %w", e.ID, err)
	}
	name := tx.abs(e.Path)
	if _, err := os.Lstat(name); err == nil {
		return fmt.Errorf("memory %s: %s already exists", e.ID, e.Path)
	}
	if err := WriteFileAtomic(name, data, 0o644); err != nil {
		return fmt.Errorf("write %s: %w", e.Path, err)
	}
	tx.undo = append(tx.undo, func() error { return os.Remove(name) })
	tx.changes = append(tx.changes, gitrepo.Change{Path: e.Path})
	return nil
}

// Tombstone soft-deletes a live entry: the file moves under the scope's
// deleted/ directory with deleted_at, deleted_reason and, when it was
// replaced, replaced_by. Nothing is ever removed from history.
func (tx *Tx) Tombstone(e *Entry, reason, replacedBy string) error {
	if e.Deleted() {
		return fmt.Errorf("memory %s is already deleted (%s)", e.ID, e.Path)
	}
	op := Op{Op: "delete", ID: e.ID, Kind: e.Kind, Scope: e.Scope, Path: DeletedPath(e.Path), Reason: reason, ReplacedBy: replacedBy}
	if replacedBy != "" {
		op.Op = "update"
	}
	tx.Ops = append(tx.Ops, op)
	if tx.dry {
		return nil
	}
	old := e.Path
	oldData, err := os.ReadFile(tx.abs(old))
	if err != nil {
		return fmt.Errorf("read %s: %w", old, err)
	}
	t := *e
	t.DeletedAt = tx.s.Now().UTC().Truncate(1e9)
	t.DeletedReason = reason
	t.ReplacedBy = replacedBy
	t.Path = DeletedPath(old)
	if t.Path == old {
		return fmt.Errorf("%s is not in the entries layout; cannot tombstone it", old)
	}
	data, err := t.Marshal()
	if err != nil {
		return fmt.Errorf("memory %s: %w", e.ID, err)
	}
	newName := tx.abs(t.Path)
	if err := WriteFileAtomic(newName, data, 0o644); err != nil {
		return fmt.Errorf("write %s: %w", t.Path, err)
	}
	tx.undo = append(tx.undo, func() error { return os.Remove(newName) })
	if err := os.Remove(tx.abs(old)); err != nil {
		return fmt.Errorf("remove %s: %w", old, err)
	}
	tx.undo = append(tx.undo, func() error { return WriteFileAtomic(tx.abs(old), oldData, 0o644) })
	if err := syncDir(filepath.Dir(tx.abs(old))); err != nil {
		return err
	}
	tx.changes = append(tx.changes, gitrepo.Change{Path: t.Path}, gitrepo.Change{Path: old, Delete: true})
	*e = t
	return nil
}

// Rewrite writes a changed live entry back to its file (a pin edit, say).
func (tx *Tx) Rewrite(e *Entry) error {
	if err := Validate(e); err != nil {
		return err
	}
	tx.Ops = append(tx.Ops, Op{Op: "update", ID: e.ID, Kind: e.Kind, Scope: e.Scope, Path: e.Path, Text: e.Body})
	if tx.dry {
		return nil
	}
	name := tx.abs(e.Path)
	oldData, err := os.ReadFile(name)
	if err != nil {
		return err
	}
	data, err := e.Marshal()
	if err != nil {
		return err
	}
	if err := WriteFileAtomic(name, data, 0o644); err != nil {
		return err
	}
	tx.undo = append(tx.undo, func() error { return WriteFileAtomic(name, oldData, 0o644) })
	tx.changes = append(tx.changes, gitrepo.Change{Path: e.Path})
	return nil
}

// Empty reports whether the change has nothing to commit.
func (tx *Tx) Empty() bool { return len(tx.changes) == 0 }

// Trailer is a git trailer line such as "Mira-Command: mira-remember".
type Trailer struct{ Key, Value string }

// Commit records the change as one git commit. subject is the first line;
// the trailers always include Mira-Command. On failure the work tree is
// rolled back.
func (tx *Tx) Commit(subject string, trailers ...Trailer) (string, error) {
	if tx.dry {
		return "", nil
	}
	if len(tx.changes) == 0 {
		return "", nil
	}
	var b strings.Builder
	b.WriteString(strings.TrimSpace(subject))
	b.WriteString("\n\n")
	b.WriteString("Mira-Command: " + tx.s.Command + "\n")
	for _, t := range trailers {
		if t.Value == "" {
			continue
		}
		b.WriteString(t.Key + ": " + strings.ReplaceAll(t.Value, "\n", " ") + "\n")
	}
	hash, err := tx.s.repo.Commit(tx.changes, b.String(), tx.s.sig())
	if err != nil {
		if rerr := tx.Rollback(); rerr != nil {
			err = errors.Join(err, fmt.Errorf("roll back: %w", rerr))
		}
		return "", fmt.Errorf("commit: %w", err)
	}
	tx.undo = nil
	return fmt.Sprint(hash), nil
}

// Rollback undoes the work tree changes of an uncommitted Tx.
func (tx *Tx) Rollback() error {
	var errs []error
	for i := len(tx.undo) - 1; i >= 0; i-- {
		if err := tx.undo[i](); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	tx.undo = nil
	tx.changes = nil
	return errors.Join(errs...)
}

// Subject builds the first line of a commit message from the operations,
// e.g. `remember: decision 01J9… "We chose PostgreSQL…"`.
func Subject(verb string, ops []Op) string {
	if len(ops) == 0 {
		return verb + ": nothing"
	}
	if len(ops) == 1 {
		o := ops[0]
		s := fmt.Sprintf("%s: %s %s", verb, o.Kind, o.ID)
		if txt := firstLine(o.Text, 60); txt != "" {
			s += fmt.Sprintf(" %q", txt)
		}
		if o.Reason != "" && o.Text == "" {
			s += fmt.Sprintf(" (%s)", firstLine(o.Reason, 60))
		}
		return s
	}
	counts := map[string]int{}
	var order []string
	for _, o := range ops {
		if counts[o.Op] == 0 {
			order = append(order, o.Op)
		}
		counts[o.Op]++
	}
	parts := make([]string, 0, len(order))
	for _, op := range order {
		parts = append(parts, fmt.Sprintf("%d %s", counts[op], op))
	}
	return fmt.Sprintf("%s: %d memories (%s)", verb, len(ops), strings.Join(parts, ", "))
}

func firstLine(s string, max int) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i] + "…"
	}
	if r := []rune(s); len(r) > max {
		s = string(r[:max]) + "…"
	}
	return s
}
