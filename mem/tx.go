package mem

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/miramem/mira/internal/arena"
	"github.com/miramem/mira/internal/atomicfile"
	"github.com/miramem/mira/internal/fault"
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

// Tx is one change to the store: files added, moved to deleted/ or
// rewritten, then one commit. Add, Tombstone and Rewrite only plan; Commit
// writes a journal, the files, the commit, and removes the journal, so a
// process killed at any point leaves either the old state or the new one
// (see Store.Recover). A dry-run Tx records its operations only.
type Tx struct {
	s     *Store
	dry   bool
	files []pending
	paths map[string]bool
	kept  arena.Arena // what the change keeps of the entries handed over
	// Ops lists what the change does, in order.
	Ops []Op
}

// pending is one file the change writes (data != nil) or removes.
type pending struct {
	Path string
	data []byte
	// written marks a file already on disk as it is to be committed
	// (AddWritten): it is neither read nor written again.
	written bool
	// entry, when set, is the entry whose file this is (AddOwned): its
	// bytes are made when it is written.
	entry *Entry
	// fresh marks the file of an entry added by the change, at a path
	// that did not exist: the journal records it absent without looking,
	// and a batch creates it in place (atomicfile.Create), refusing one
	// that appeared meanwhile.
	fresh bool
}

// Begin starts a change. The caller holds the store lock (unless dry).
func (s *Store) Begin(dry bool) *Tx { return &Tx{s: s, dry: dry, paths: map[string]bool{}} }

// Grow makes room for n more files and operations, so that a change of a
// million entries does not copy its plans again and again as they grow,
// nor keep up to twice their room while it lasts.
func (tx *Tx) Grow(n int) {
	tx.files = slices.Grow(tx.files, n)
	tx.Ops = slices.Grow(tx.Ops, n)
	if len(tx.paths) == 0 {
		tx.paths = make(map[string]bool, n)
	}
}

func (tx *Tx) abs(rel string) string { return filepath.Join(tx.s.Root, filepath.FromSlash(rel)) }

func (tx *Tx) plan(rel string, data []byte) error {
	// Every path a change writes or removes is a clean path inside the
	// store's entries or artifacts: never .git, never outside the store.
	if !changeablePath(rel) {
		return fmt.Errorf("%q is not a path a change may write", rel)
	}
	if tx.paths[rel] {
		return fmt.Errorf("%s is changed twice in one commit", rel)
	}
	if tx.paths == nil {
		tx.paths = map[string]bool{}
	}
	tx.paths[rel] = true
	tx.files = append(tx.files, pending{Path: rel, data: data})
	return nil
}

// Add plans a new entry. Missing id, creation time and scope are filled in;
// the path is chosen from the layout.
func (tx *Tx) Add(e *Entry) error { return tx.add(e, false) }

// AddOwned is Add for an entry the caller hands over: it must not change
// until Commit returns. Its file's bytes are made as the file is written,
// so a change of a million entries does not hold every file in memory at
// once; a failure to encode one then rolls the whole change back.
func (tx *Tx) AddOwned(e *Entry) error { return tx.add(e, true) }

func (tx *Tx) add(e *Entry, owned bool) error {
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
	if owned {
		// A bulk load's million ids and paths live to its end: in the
		// change's arena, the collector marks a block of them as one.
		e.ID, e.Path = tx.kept.String(e.ID), tx.kept.String(e.Path)
	}
	tx.Ops = append(tx.Ops, Op{Op: "add", ID: e.ID, Kind: e.Kind, Scope: e.Scope, Path: e.Path, Text: e.Body})
	if tx.dry {
		return nil
	}
	var data []byte
	if !owned {
		var err error
		if data, err = e.Marshal(); err != nil {
			return fmt.Errorf("memory %s: %w", e.ID, err)
		}
	}
	// An entry handed over (a bulk load's) is looked for when its file is
	// made, which refuses an existing one all the same: a million looks
	// here had been a tenth of a load's system time.
	if !owned {
		if _, err := os.Lstat(tx.abs(e.Path)); err == nil {
			return existsError(e)
		}
	}
	if err := tx.plan(e.Path, data); err != nil {
		return err
	}
	f := &tx.files[len(tx.files)-1]
	f.fresh = true
	if owned {
		f.entry = e
	}
	return nil
}

// existsError is the error of an entry whose path is taken.
func existsError(e *Entry) error {
	return fmt.Errorf("memory %s: %s already exists", e.ID, e.Path)
}

// Tombstone plans a soft delete of a live entry: the file moves under the
// scope's deleted/ directory with deleted_at, deleted_reason and, when it
// was replaced, replaced_by. Nothing is ever removed from history.
func (tx *Tx) Tombstone(e *Entry, reason, replacedBy string) error {
	if e.Deleted() {
		return fmt.Errorf("memory %s is already deleted (%s)", e.ID, e.Path)
	}
	old := e.Path
	t := *e
	t.DeletedAt = tx.s.Now().UTC().Truncate(1e9)
	t.DeletedReason = reason
	t.ReplacedBy = replacedBy
	t.Path = DeletedPath(old)
	if t.Path == old {
		return fmt.Errorf("%s is not in the entries layout; cannot tombstone it", old)
	}
	op := Op{Op: "delete", ID: e.ID, Kind: e.Kind, Scope: e.Scope, Path: t.Path, Reason: reason, ReplacedBy: replacedBy}
	if replacedBy != "" {
		op.Op = "update"
	}
	tx.Ops = append(tx.Ops, op)
	if tx.dry {
		*e = t
		return nil
	}
	data, err := t.Marshal()
	if err != nil {
		return fmt.Errorf("memory %s: %w", e.ID, err)
	}
	if err := tx.plan(t.Path, data); err != nil {
		return err
	}
	if err := tx.plan(old, nil); err != nil {
		return err
	}
	*e = t
	return nil
}

// Rewrite plans writing a changed live entry back to its file (a pin edit).
func (tx *Tx) Rewrite(e *Entry) error {
	if err := Validate(e); err != nil {
		return err
	}
	tx.Ops = append(tx.Ops, Op{Op: "update", ID: e.ID, Kind: e.Kind, Scope: e.Scope, Path: e.Path, Text: e.Body})
	if tx.dry {
		return nil
	}
	data, err := e.Marshal()
	if err != nil {
		return err
	}
	return tx.plan(e.Path, data)
}

// AddFile plans committing a file that is not an entry: an artifact (a
// large tool output, under artifacts/<scope>/) with the given content. It
// may already be on disk, written by the tool that made it; it is written
// again, atomically, with this content.
func (tx *Tx) AddFile(rel string, data []byte) error {
	if err := tx.addArtifact(rel); err != nil {
		return err
	}
	if tx.dry {
		return nil
	}
	return tx.plan(rel, data)
}

// addArtifact checks that rel is an artifact's path and records adding it.
func (tx *Tx) addArtifact(rel string) error {
	if path.Clean(rel) != rel || !strings.HasPrefix(rel, "artifacts/") || strings.Count(rel, "/") != 2 {
		return fmt.Errorf("%s: not an artifact path (artifacts/<scope>/<name>)", rel)
	}
	if err := ValidScope(strings.Split(rel, "/")[1]); err != nil {
		return fmt.Errorf("%s: %w", rel, err)
	}
	tx.Ops = append(tx.Ops, Op{Op: "add", Path: rel})
	return nil
}

// AddWritten plans committing an artifact that its maker has already
// written whole at rel (a long output streamed to disk): the commit
// records the file as it is on disk, without reading it into memory or
// writing it again. Should the change fail or be interrupted, the file is
// removed, as a file new in the change would be.
func (tx *Tx) AddWritten(rel string) error {
	if err := tx.addArtifact(rel); err != nil {
		return err
	}
	if tx.dry {
		return nil
	}
	fi, err := os.Lstat(tx.abs(rel))
	if err != nil {
		return fmt.Errorf("%s: %w", rel, err)
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("%s: not a regular file", rel)
	}
	if err := tx.plan(rel, []byte{}); err != nil {
		return err
	}
	tx.files[len(tx.files)-1].data, tx.files[len(tx.files)-1].written = nil, true
	return nil
}

// Put plans writing a file under entries/ or artifacts/ with exactly
// these bytes (a merge writes versions as they came, without rewriting
// them).
func (tx *Tx) Put(rel string, data []byte) error {
	if data == nil {
		data = []byte{}
	}
	tx.Ops = append(tx.Ops, Op{Op: "update", Path: rel})
	if tx.dry {
		return nil
	}
	return tx.plan(rel, data)
}

// Remove plans removing a file under entries/ or artifacts/.
func (tx *Tx) Remove(rel string) error {
	tx.Ops = append(tx.Ops, Op{Op: "delete", Path: rel})
	if tx.dry {
		return nil
	}
	return tx.plan(rel, nil)
}

// Empty reports whether the change has nothing to commit.
func (tx *Tx) Empty() bool { return len(tx.files) == 0 }

// Rollback forgets the planned changes. Nothing was written yet.
func (tx *Tx) Rollback() error {
	tx.files = nil
	tx.paths = map[string]bool{}
	return nil
}

// Trailer is a git trailer line such as "Mira-Command: mira-remember".
type Trailer struct{ Key, Value string }

// journal records a change in flight in .git/mira-journal: the commit it
// started from and every path it touches with the path's content before
// (absent: the file did not exist). It is written, synced, before the first
// file; removed after the commit.
type journal struct {
	Head  string         `json:"head"`
	Files []journalEntry `json:"files"`
	// Added names a file in .git listing more paths the change adds, a
	// line each, written as it goes (see Bulk).
	Added string `json:"added,omitempty"`
}

type journalEntry struct {
	Path   string `json:"path"`
	Before []byte `json:"before,omitempty"` // nil: the file did not exist
	Absent bool   `json:"absent,omitempty"`
}

func (s *Store) journalPath() string { return filepath.Join(s.Root, ".git", "mira-journal") }

// marshal returns json.Marshal(j), the entries of files that were absent
// written by hand: through reflection a bulk load's million took 5 s.
func (j *journal) marshal() ([]byte, error) {
	head, err := json.Marshal(j.Head)
	if err != nil {
		return nil, err
	}
	b := make([]byte, 0, 32+len(head)+len(j.Files)*80)
	b = append(b, `{"head":`...)
	b = append(b, head...)
	if j.Added != "" {
		added, err := json.Marshal(j.Added)
		if err != nil {
			return nil, err
		}
		b = append(b, `,"added":`...)
		b = append(b, added...)
	}
	b = append(b, `,"files":`...)
	if j.Files == nil {
		return append(b, "null}"...), nil
	}
	b = append(b, '[')
	for i, f := range j.Files {
		if i > 0 {
			b = append(b, ',')
		}
		if f.Absent && f.Before == nil && plainJSON(f.Path) {
			b = append(b, `{"path":"`...)
			b = append(b, f.Path...)
			b = append(b, `","absent":true}`...)
			continue
		}
		e, err := json.Marshal(f)
		if err != nil {
			return nil, err
		}
		b = append(b, e...)
	}
	return append(b, "]}"...), nil
}

// plainJSON reports whether json.Marshal writes s between its quotes as
// it is: printable ASCII that is neither a quote, a backslash, nor one of
// the characters it escapes for HTML.
func plainJSON(s string) bool {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c < 0x20 || c > 0x7e, c == '"', c == '\\', c == '<', c == '>', c == '&':
			return false
		}
	}
	return true
}

// Commit writes the planned files and records them as one git commit.
// subject is the first line of the message; the trailers always include
// Mira-Command. On failure the work tree is put back as it was.
func (tx *Tx) Commit(subject string, trailers ...Trailer) (string, error) {
	if tx.dry || len(tx.files) == 0 {
		return "", nil
	}
	return tx.commit(subject, "", nil, trailers)
}

// CommitMerge is Commit for a merge: the commit's parents are the
// current commit and others, its message the subject, the body (lines
// saying what was decided) and the trailers. It commits even when no
// file changes, to record what was merged.
func (tx *Tx) CommitMerge(subject, body string, others []string, trailers ...Trailer) (string, error) {
	if tx.dry {
		return "", nil
	}
	return tx.commit(subject, body, others, trailers)
}

// commitMessage is a change's commit message: the subject, the body, and
// the trailers after Mira-Command.
func commitMessage(subject, body, command string, trailers []Trailer) string {
	var b strings.Builder
	b.WriteString(strings.TrimSpace(subject))
	b.WriteString("\n\n")
	if body = strings.TrimSpace(body); body != "" {
		b.WriteString(body)
		b.WriteString("\n\n")
	}
	b.WriteString("Mira-Command: " + command + "\n")
	for _, t := range trailers {
		if t.Value == "" {
			continue
		}
		b.WriteString(t.Key + ": " + strings.ReplaceAll(t.Value, "\n", " ") + "\n")
	}
	return b.String()
}

func (tx *Tx) commit(subject, body string, others []string, trailers []Trailer) (string, error) {
	msg := commitMessage(subject, body, tx.s.Command, trailers)
	head, err := tx.s.repo.Head()
	if err != nil {
		return "", err
	}
	// The paths planned are known to differ now: a bulk load's map of a
	// million goes before its commit needs the room.
	tx.paths = nil
	j := journal{Head: head, Files: make([]journalEntry, 0, len(tx.files))}
	for _, f := range tx.files {
		if f.written || f.fresh {
			// Undone, it goes: the change brought it.
			j.Files = append(j.Files, journalEntry{Path: f.Path, Absent: true})
			continue
		}
		before, err := os.ReadFile(tx.abs(f.Path))
		switch {
		case err == nil:
			j.Files = append(j.Files, journalEntry{Path: f.Path, Before: before})
		case errors.Is(err, os.ErrNotExist):
			j.Files = append(j.Files, journalEntry{Path: f.Path, Absent: true})
		default:
			return "", err
		}
	}
	jdata, err := j.marshal()
	if err != nil {
		return "", err
	}
	if err := WriteFileAtomic(tx.s.journalPath(), jdata, FileMode); err != nil {
		return "", fmt.Errorf("write journal: %w", err)
	}
	// reached marks the journal's files the change has reached: a failure
	// undoes those alone, and never removes a file it did not make (one
	// that appeared at a fresh entry's path meanwhile). Once every file is
	// written, all are.
	reached := make([]bool, len(j.Files))
	all := false
	fail := func(err error) (string, error) {
		undo := j
		undo.Files = nil
		for i, f := range j.Files {
			if all || reached[i] {
				undo.Files = append(undo.Files, f)
			}
		}
		if rerr := tx.s.undo(undo); rerr != nil {
			return "", errors.Join(err, fmt.Errorf("roll back: %w", rerr))
		}
		os.Remove(tx.s.journalPath())
		return "", err
	}
	batch := len(tx.files) >= batchSync
	changes := make([]gitrepo.Change, len(tx.files))
	dirs := map[string]bool{}
	made := map[string]bool{} // directories there already or made
	// A batch's new files are created and their blobs written by workers
	// (createFresh) once the other files are in place.
	var (
		blobs *gitrepo.Blobs
		fresh []int
	)
	if batch {
		blobs = tx.s.repo.Blobs(len(tx.files))
		defer blobs.Close()
	}
	for i, f := range tx.files {
		name := tx.abs(f.Path)
		if f.written {
			reached[i] = true
			if !batch {
				if err := syncFile(name); err != nil {
					return fail(fmt.Errorf("sync %s: %w", f.Path, err))
				}
			}
			dirs[filepath.Dir(name)] = true
			changes[i] = gitrepo.Change{Path: f.Path}
			continue
		}
		if f.entry == nil && f.data == nil {
			if err := os.Remove(name); err != nil && !errors.Is(err, os.ErrNotExist) {
				return fail(fmt.Errorf("remove %s: %w", f.Path, err))
			}
			reached[i] = true
			dirs[filepath.Dir(name)] = true
			changes[i] = gitrepo.Change{Path: f.Path, Delete: true}
			continue
		}
		if d := filepath.Dir(name); !made[d] {
			if err := os.MkdirAll(d, DirMode); err != nil {
				return fail(fmt.Errorf("write %s: %w", f.Path, err))
			}
			made[d] = true
		}
		if f.fresh && batch {
			fresh = append(fresh, i)
			continue
		}
		data := f.data
		if f.entry != nil {
			var err error
			if data, err = f.entry.Marshal(); err != nil {
				return fail(fmt.Errorf("memory %s: %w", f.entry.ID, err))
			}
		}
		var err error
		if f.fresh {
			if _, lerr := os.Lstat(name); lerr == nil {
				err = fs.ErrExist
			}
		}
		if err == nil {
			err = atomicfile.Write(name, data, FileMode, !batch)
		}
		if errors.Is(err, fs.ErrExist) && f.fresh {
			return fail(tx.existsError(&f))
		}
		reached[i] = true // a failed write may have left part of it
		if err != nil {
			return fail(fmt.Errorf("write %s: %w", f.Path, err))
		}
		changes[i] = gitrepo.Change{Path: f.Path}
	}
	if err := tx.createFresh(fresh, blobs, changes, reached); err != nil {
		return fail(err)
	}
	all = true
	if batch {
		if err := syncFS(tx.s.Root); err != nil {
			return fail(err)
		}
	} else {
		for d := range dirs {
			if err := atomicfile.SyncDir(d); err != nil {
				return fail(err)
			}
		}
	}
	fault.At(fault.TxFilesWritten)
	var hash string
	switch {
	case blobs != nil && others != nil:
		hash, err = blobs.CommitMerge(changes, msg, tx.s.sig(), others...)
	case blobs != nil:
		hash, err = blobs.Commit(changes, msg, tx.s.sig())
	case others != nil:
		hash, err = tx.s.repo.CommitMerge(changes, msg, tx.s.sig(), others...)
	default:
		hash, err = tx.s.repo.Commit(changes, msg, tx.s.sig())
	}
	if err != nil && !errors.Is(err, gitrepo.ErrIndexStale) {
		return fail(fmt.Errorf("commit: %w", err))
	}
	// With ErrIndexStale the commit stands; only .git/index lags (git
	// status shows the paths as changed until `git reset -q`).
	os.Remove(tx.s.journalPath())
	tx.files = nil
	return hash, nil
}

// undo puts the journal's paths back as they were before the change.
func (s *Store) undo(j journal) error {
	var errs []error
	for _, f := range j.Files {
		name := filepath.Join(s.Root, filepath.FromSlash(f.Path))
		if f.Absent {
			if err := os.Remove(name); err != nil && !errors.Is(err, os.ErrNotExist) {
				errs = append(errs, err)
			}
			continue
		}
		if err := WriteFileAtomic(name, f.Before, FileMode); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Recover finishes what a writer killed in the middle of a change left: if
// its commit was made, the change stands; if not, the files it wrote are
// put back as they were. It runs when a writer takes the lock.
func (s *Store) Recover() (recovered bool, err error) {
	// A journal killed while it was written leaves only its temporary
	// file, and a commit killed midway its git temporaries: every writer
	// holds the store lock, so they are a dead writer's.
	removeTemps(s.journalPath())
	if s.repo != nil {
		s.repo.RemoveLeftovers()
		// A commit killed after moving the branch and before writing
		// .git/index left the index behind HEAD; nothing else would
		// notice when the next change has nothing to commit.
		if _, err := s.repo.RepairIndex(); err != nil {
			return false, err
		}
	}
	data, err := os.ReadFile(s.journalPath())
	if errors.Is(err, os.ErrNotExist) {
		// A list without its journal is a Bulk killed before it wrote
		// the journal, and so before any file.
		return false, removeIfThere(s.bulkListPath())
	}
	if err != nil {
		return false, err
	}
	var j journal
	if err := json.Unmarshal(data, &j); err != nil {
		// A journal is written atomically, so this one is not ours to
		// trust; leave the files alone.
		os.Remove(s.journalPath())
		os.Remove(s.bulkListPath())
		return false, nil
	}
	if j.Added != "" {
		added, err := readBulkList(filepath.Join(s.Root, ".git", filepath.Base(j.Added)))
		if err != nil {
			return false, err
		}
		j.Files = append(j.Files, added...)
	}
	// Files the killed writer had begun to write are temporary files
	// beside the journal's paths: nothing else would ever remove them.
	for _, f := range j.Files {
		removeTemps(filepath.Join(s.Root, filepath.FromSlash(f.Path)))
	}
	head, err := s.repo.Head()
	if err != nil {
		return false, err
	}
	if head == j.Head {
		if err := s.undo(j); err != nil {
			return false, fmt.Errorf("roll back an interrupted change: %w", err)
		}
	}
	if err := os.Remove(s.journalPath()); err != nil {
		return true, err
	}
	return true, removeIfThere(s.bulkListPath())
}

// removeIfThere removes name unless it is not there.
func removeIfThere(name string) error {
	if err := os.Remove(name); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

// removeTemps removes the temporary files an atomic write of name leaves
// when its writer is killed (see atomicfile.Write).
func removeTemps(name string) {
	tmps, _ := filepath.Glob(filepath.Join(filepath.Dir(name), "."+globQuote(filepath.Base(name))+".*.tmp"))
	for _, t := range tmps {
		os.Remove(t)
	}
}

// globQuote escapes the characters filepath.Match treats specially.
func globQuote(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(`*?[]\`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
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
		if counts[o.Kind] == 0 {
			order = append(order, o.Kind)
		}
		counts[o.Kind]++
	}
	return countSubject(verb, len(ops), order, counts)
}

// countSubject is Subject for n memories, counts of them by kind, the
// kinds in order.
func countSubject(verb string, n int, kinds []string, counts map[string]int) string {
	parts := make([]string, 0, len(kinds))
	for _, k := range kinds {
		parts = append(parts, fmt.Sprintf("%d %s", counts[k], k))
	}
	return fmt.Sprintf("%s: %d memories (%s)", verb, n, strings.Join(parts, ", "))
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

// syncFile flushes a file another writer made to disk.
func syncFile(name string) error {
	f, err := os.Open(name)
	if err != nil {
		return err
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
