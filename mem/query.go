package mem

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
)

// The query methods below read the store the way the layout lays it out,
// for callers that know which scope and kind they want. They only read:
// they take no lock, so they never wait for a writer, and since every
// write is a rename of a whole file they never see half of one. Listings
// read directories only, never the files; a listing that cannot read a
// directory returns the paths it found with the first such error. Files
// that vanish while they are read are left out without a word.

// ComparePaths orders entry paths by file name, which is the creation time
// and then the id in the standard layout, and then by the whole path. It
// is the order of every listing below, and of a conversation's turns
// across their role directories.
func ComparePaths(a, b string) int {
	if c := strings.Compare(path.Base(a), path.Base(b)); c != 0 {
		return c
	}
	return strings.Compare(a, b)
}

// Scopes returns the names of the store's scopes, sorted: the directories
// under entries/ whose names are valid scopes (see ValidScope). A store
// without entries has none.
func (s *Store) Scopes() ([]string, error) {
	ents, err := os.ReadDir(s.abs(EntriesDir))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list scopes: %w", err)
	}
	var out []string
	for _, e := range ents {
		if e.IsDir() && ValidScope(e.Name()) == nil {
			out = append(out, e.Name())
		}
	}
	return out, nil
}

// HasScope reports whether scope is a valid scope name and the store has a
// directory for it (which may hold no entries).
func (s *Store) HasScope(scope string) bool {
	if ValidScope(scope) != nil {
		return false
	}
	fi, err := os.Stat(s.abs(ScopeDir(scope)))
	return err == nil && fi.IsDir()
}

// Paths lists the live entry files of a scope's kind, or of every kind when
// kind is "", as slash-separated paths relative to the root in the order
// of ComparePaths: oldest first. Turns and summaries of every role and
// level are listed together; kind "" also lists hand-placed files, right
// in the scope's directory or in directories that name no kind. Tombstones
// are not listed (see Tombstones), nor are hidden files and directories or
// files not ending in ".md". A scope without a directory has no paths.
func (s *Store) Paths(scope, kind string) ([]string, error) {
	dir, err := scopeKindDir(scope, kind, ScopeDir)
	if err != nil {
		return nil, err
	}
	return s.list(dir)
}

// Entries reads the files Paths lists, in that order. Files that cannot
// be read or parsed are passed to bad (a *ParseError for broken front
// matter), if bad is not nil, and skipped: one broken file does not hide
// the others. Files under a kind's directory keep the kind their front
// matter gives them, and a file outside deleted/ that carries deleted_at
// is returned as it is (see Entry.Deleted).
func (s *Store) Entries(scope, kind string, bad func(error)) ([]*Entry, error) {
	paths, err := s.Paths(scope, kind)
	return s.ReadAll(paths, bad), err
}

// TurnPaths lists a scope's live turn files in the order of the
// conversation (see ComparePaths), merging the role directories; with
// roles given, only the turns in those roles' directories.
func (s *Store) TurnPaths(scope string, roles ...string) ([]string, error) {
	if len(roles) == 0 {
		return s.Paths(scope, KindTurn)
	}
	if err := ValidScope(scope); err != nil {
		return nil, err
	}
	var out []string
	for i, r := range roles {
		if !slices.Contains(Roles, r) {
			return nil, fmt.Errorf("unknown role %q (want user, assistant or tool)", r)
		}
		if slices.Contains(roles[:i], r) {
			continue
		}
		paths, err := s.list(TurnDir(scope, r))
		out = append(out, paths...)
		if err != nil {
			return out, err
		}
	}
	if len(roles) > 1 {
		slices.SortFunc(out, ComparePaths)
	}
	return out, nil
}

// TurnBefore returns the path of the live turn right before turn in its
// scope's conversation, or "" when there is none. turn is the path of a
// live turn file, which need not exist: a turn about to be written has
// neighbours too. Each call lists the scope's turns; to walk many, list
// them once with TurnPaths.
func (s *Store) TurnBefore(turn string) (string, error) {
	turns, i, _, err := s.locateTurn(turn)
	if err != nil || i == 0 {
		return "", err
	}
	return turns[i-1], nil
}

// TurnAfter returns the path of the live turn right after turn in its
// scope's conversation, or "" when there is none (see TurnBefore).
func (s *Store) TurnAfter(turn string) (string, error) {
	turns, i, found, err := s.locateTurn(turn)
	if err != nil {
		return "", err
	}
	if found {
		i++
	}
	if i < len(turns) {
		return turns[i], nil
	}
	return "", nil
}

// locateTurn lists the turns of turn's scope and finds where turn is or
// would be among them.
func (s *Store) locateTurn(turn string) (turns []string, i int, found bool, err error) {
	p, err := ParsePath(turn)
	if err != nil {
		return nil, 0, false, err
	}
	if p.Kind != KindTurn || p.Deleted {
		return nil, 0, false, fmt.Errorf("%s: not the path of a live turn", turn)
	}
	turns, err = s.TurnPaths(p.Scope)
	if err != nil {
		return nil, 0, false, err
	}
	i, found = slices.BinarySearchFunc(turns, turn, ComparePaths)
	return turns, i, found, nil
}

// Tombstones lists the tombstones of a scope's kind, or of every kind when
// kind is "": the files under its deleted/ directory, in the order of
// ComparePaths (by creation time, not by time of deletion).
func (s *Store) Tombstones(scope, kind string) ([]string, error) {
	dir, err := scopeKindDir(scope, kind, DeletedDir)
	if err != nil {
		return nil, err
	}
	return s.list(dir)
}

// ReadAll reads the entry files at paths, in order. Files that cannot be
// read or parsed are passed to bad, if it is not nil, and skipped; files
// that no longer exist are skipped.
func (s *Store) ReadAll(paths []string, bad func(error)) []*Entry {
	out := make([]*Entry, 0, len(paths))
	for _, p := range paths {
		e, err := s.Read(p)
		if err != nil {
			if bad != nil && !errors.Is(err, fs.ErrNotExist) {
				bad(err)
			}
			continue
		}
		out = append(out, e)
	}
	return out
}

// scopeKindDir returns the directory of a scope's kind below base(scope),
// or base(scope) itself for kind "".
func scopeKindDir(scope, kind string, base func(string) string) (string, error) {
	if err := ValidScope(scope); err != nil {
		return "", err
	}
	dir := base(scope)
	if kind != "" {
		if !slices.Contains(Kinds, kind) {
			return "", fmt.Errorf("unknown kind %q (want one of %s)", kind, strings.Join(Kinds, ", "))
		}
		dir += "/" + dirOfKind(kind)
	}
	return dir, nil
}

func (s *Store) abs(rel string) string { return filepath.Join(s.Root, filepath.FromSlash(rel)) }

// list returns the entry files below dir, a store-relative directory, in
// the order of ComparePaths. Within a scope's live tree it does not enter
// the scope's deleted/ directory; it never enters hidden directories.
// Only regular files ending in ".md" that are not hidden are listed.
func (s *Store) list(dir string) ([]string, error) {
	live := IsLiveDir(dir)
	var (
		out   []string
		first error
	)
	var visit func(rel string)
	visit = func(rel string) {
		ents, err := os.ReadDir(s.abs(rel))
		if err != nil {
			if !errors.Is(err, fs.ErrNotExist) && first == nil {
				first = fmt.Errorf("list %s: %w", rel, err)
			}
			return
		}
		for _, de := range ents {
			name := de.Name()
			if strings.HasPrefix(name, ".") {
				continue
			}
			child := rel + "/" + name
			switch {
			case de.IsDir():
				if !live || IsLiveDir(child) {
					visit(child)
				}
			case de.Type().IsRegular() && strings.HasSuffix(name, ".md"):
				out = append(out, child)
			}
		}
	}
	visit(dir)
	slices.SortFunc(out, ComparePaths)
	return out, first
}
