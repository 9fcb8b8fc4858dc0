package mem

import (
	"errors"
	"fmt"
	"path"
	"strings"
	"time"
)

// EntriesDir is the directory, relative to the store root, that holds
// every entry file.
const EntriesDir = "entries"

// deletedDir is the directory of a scope that holds its tombstones.
const deletedDir = "deleted"

// stampLayout is the time layout of the creation time that starts an entry
// file's name.
const stampLayout = "20060102T150405Z"

// ErrNotEntryPath is wrapped by the errors of ParsePath.
var ErrNotEntryPath = errors.New("not an entry file path")

// EntryPath is an entry file's path relative to the store root, split into
// the parts the layout gives it:
//
//	entries/<Scope>/[deleted/]<KindDir>/[<Role>/|<Level>/][<Shard>/]<Stamp>__<ID>.md
//
// ParsePath makes one from a path and String puts it back together. Only
// the file name and the scope are required: a hand-placed file right in a
// scope's directory, or in a directory that names no kind, is an entry too
// (of kind note, unless its front matter says otherwise).
type EntryPath struct {
	// Scope is the scope's directory. ParsePath takes any plain directory
	// name except "deleted"; ValidScope tells whether Mira would make it.
	Scope string
	// Deleted is true for a tombstone: a file under the scope's deleted/
	// directory.
	Deleted bool
	// KindDir is the directory below the scope (below deleted/ for a
	// tombstone): the plural of a kind, such as "facts" or "turns". It is
	// "" for a file right in the scope's (or the deleted/) directory.
	KindDir string
	// Kind is the kind KindDir stands for, "" when it stands for none.
	Kind string
	// Role is the directory below turns/ that holds a turn, as named (user,
	// assistant or tool in the standard layout); "" for other kinds and for
	// a file right in turns/.
	Role string
	// Level is the directory below summaries/ that holds a summary, as
	// named (L1, L2 or L3 in the standard layout); "" otherwise.
	Level string
	// Shard is what directories remain between the ones above and the
	// file, slash-separated: "" in the standard layout, which a large
	// store may shard further (by month, say).
	Shard string
	// Name is the file name, ending in ".md".
	Name string
	// Stamp and ID are the parts of Name before and after its first "__",
	// without ".md": the creation time as yyyymmddThhmmssZ and the entry's
	// id in the standard layout. Both are "" when Name has no "__"; neither
	// is checked (see Created).
	Stamp, ID string
}

// ParsePath splits a slash-separated path relative to the store root into
// the parts of an entry file's path. It fails, with an error wrapping
// ErrNotEntryPath, for a path that cannot name an entry file: one outside
// entries/, not ending in ".md", without a scope directory, with an empty,
// "." or ".." element or a hidden one (starting with a dot, as editors'
// swap and lock files do), or whose scope is named "deleted". It reads
// nothing from disk.
func ParsePath(rel string) (EntryPath, error) {
	var p EntryPath
	rest, ok := strings.CutPrefix(rel, EntriesDir+"/")
	if !ok {
		return p, notEntryPath(rel, "not under "+EntriesDir+"/")
	}
	for elem := range strings.SplitSeq(rest, "/") {
		switch {
		case elem == "" || elem == "." || elem == "..":
			return p, notEntryPath(rel, `empty, "." or ".." path element`)
		case elem[0] == '.':
			return p, notEntryPath(rel, fmt.Sprintf("hidden file or directory %q", elem))
		}
	}
	dirs, name := "", rest
	if i := strings.LastIndexByte(rest, '/'); i >= 0 {
		dirs, name = rest[:i], rest[i+1:]
	}
	if !strings.HasSuffix(name, ".md") {
		return p, notEntryPath(rel, "not a .md file")
	}
	if dirs == "" {
		return p, notEntryPath(rel, "not in a scope's directory")
	}
	p.Scope, dirs = firstElem(dirs)
	if p.Scope == deletedDir {
		return p, notEntryPath(rel, `"deleted" is not a scope`)
	}
	if d, after := firstElem(dirs); d == deletedDir {
		p.Deleted, dirs = true, after
	}
	if dirs != "" {
		p.KindDir, dirs = firstElem(dirs)
		p.Kind, _ = kindOfDir(p.KindDir)
		if dirs != "" {
			switch p.Kind {
			case KindTurn:
				p.Role, dirs = firstElem(dirs)
			case KindSummary:
				p.Level, dirs = firstElem(dirs)
			}
		}
		p.Shard = dirs
	}
	p.Name = name
	if stamp, id, ok := splitName(name); ok {
		p.Stamp, p.ID = stamp, id
	}
	return p, nil
}

// splitName splits an entry file's name into the parts before and after
// its first "__", without ".md".
func splitName(name string) (stamp, id string, ok bool) {
	return strings.Cut(strings.TrimSuffix(name, ".md"), "__")
}

// firstElem splits the first element off a slash-separated path.
func firstElem(p string) (first, rest string) {
	first, rest, _ = strings.Cut(p, "/")
	return first, rest
}

func notEntryPath(rel, why string) error {
	return fmt.Errorf("%s: %w: %s", rel, ErrNotEntryPath, why)
}

// String returns the path p was parsed from.
func (p EntryPath) String() string {
	elems := []string{EntriesDir, p.Scope}
	if p.Deleted {
		elems = append(elems, deletedDir)
	}
	for _, e := range []string{p.KindDir, p.Role, p.Level, p.Shard, p.Name} {
		if e != "" {
			elems = append(elems, e)
		}
	}
	return strings.Join(elems, "/")
}

// Created returns the creation time that Stamp gives, and false when
// Stamp is not of the form yyyymmddThhmmssZ.
func (p EntryPath) Created() (time.Time, bool) {
	t, err := time.Parse(stampLayout, p.Stamp)
	return t, err == nil
}

// IsLiveDir reports whether rel, a slash-separated directory path relative
// to the store root, can hold live entry files: entries/ itself, or a
// directory below it that is not hidden and is neither a scope's deleted/
// directory nor inside one. A walk of the live entries enters exactly these
// directories.
func IsLiveDir(rel string) bool {
	if rel == EntriesDir {
		return true
	}
	rest, ok := strings.CutPrefix(rel, EntriesDir+"/")
	if !ok {
		return false
	}
	depth := 0
	for elem := range strings.SplitSeq(rest, "/") {
		if elem == "" || elem[0] == '.' || (depth <= 1 && elem == deletedDir) {
			return false
		}
		depth++
	}
	return true
}

// ScopeDir returns a scope's directory, entries/<scope>. The scope is not
// checked (see ValidScope).
func ScopeDir(scope string) string { return path.Join(EntriesDir, scope) }

// KindDir returns the directory of a kind's live entries in a scope,
// entries/<scope>/<kind-dir>; turns and summaries sit one level further
// down (see TurnDir and SummaryDir).
func KindDir(scope, kind string) string { return path.Join(EntriesDir, scope, dirOfKind(kind)) }

// TurnDir returns the directory of a scope's turns of one role,
// entries/<scope>/turns/<role>; with role "", the turns/ directory.
func TurnDir(scope, role string) string { return path.Join(KindDir(scope, KindTurn), role) }

// SummaryDir returns the directory of a scope's summaries of one level,
// entries/<scope>/summaries/<level>; with level "", the summaries/
// directory.
func SummaryDir(scope, level string) string {
	return path.Join(KindDir(scope, KindSummary), level)
}

// DeletedDir returns the directory of a scope's tombstones,
// entries/<scope>/deleted, below which they keep the layout of the live
// entries (see DeletedPath).
func DeletedDir(scope string) string { return path.Join(EntriesDir, scope, deletedDir) }

// dirOfKind returns the plural directory of a kind.
func dirOfKind(kind string) string {
	switch kind {
	case KindFact:
		return "facts"
	case KindPreference:
		return "preferences"
	case KindDecision:
		return "decisions"
	case KindCorrection:
		return "corrections"
	case KindGoal:
		return "goals"
	case KindTask:
		return "tasks"
	case KindNote:
		return "notes"
	case KindTurn:
		return "turns"
	case KindSummary:
		return "summaries"
	}
	return kind + "s"
}

// kindOfDir returns the kind whose entries a directory holds, and false
// when it is no kind's directory.
func kindOfDir(dir string) (string, bool) {
	for _, k := range Kinds {
		if dirOfKind(k) == dir {
			return k, true
		}
	}
	return "", false
}

// FileName is the base name of an entry's file: its creation time in UTC
// and its id.
func FileName(created time.Time, id string) string {
	return created.UTC().Format(stampLayout) + "__" + id + ".md"
}

// RelPath returns where an entry belongs in the standard layout (live, not
// deleted), relative to the store root.
func RelPath(e *Entry) string {
	return path.Join(RelDir(e), FileName(e.CreatedAt, e.ID))
}

// RelDir returns the directory of an entry's scope, kind (and role or level).
func RelDir(e *Entry) string {
	switch e.Kind {
	case KindTurn:
		return TurnDir(e.Scope, e.Role)
	case KindSummary:
		return SummaryDir(e.Scope, e.Level)
	}
	return KindDir(e.Scope, e.Kind)
}

// DeletedPath returns where a live file moves when it is tombstoned:
// entries/<scope>/deleted/<kind-dir>/.... A path that is a tombstone
// already, or that is not in a kind's directory, is returned unchanged.
func DeletedPath(rel string) string {
	p, err := ParsePath(rel)
	if err != nil || p.Deleted || p.KindDir == "" {
		return rel
	}
	p.Deleted = true
	return p.String()
}
