package mem

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/miramem/mira/internal/gitrepo"
)

// Sharing says which files of a store a sync exchanges with a remote (see
// "Sharing" in doc.go). The zero value shares every scope but no
// conversation.
type Sharing struct {
	// Scopes are glob patterns (path.Match) of the scopes shared; none
	// means every scope.
	Scopes []string
	// Turns shares conversation turns, the summaries made of them and
	// the artifacts of tool turns, in the shared scopes.
	Turns bool
}

// Check reports a malformed scope pattern.
func (s Sharing) Check() error {
	for _, p := range s.Scopes {
		if _, err := path.Match(p, "x"); err != nil || p == "" {
			return fmt.Errorf("sync.scopes: bad pattern %q", p)
		}
	}
	return nil
}

// ShareScope reports whether a scope is shared.
func (s Sharing) ShareScope(scope string) bool {
	if len(s.Scopes) == 0 {
		return true
	}
	for _, p := range s.Scopes {
		if ok, _ := path.Match(p, scope); ok {
			return true
		}
	}
	return false
}

// Shares reports whether the file at rel (slash path relative to the store
// root) is exchanged: the marker and .gitignore always, entries and
// artifacts of shared scopes except conversations unless Turns, and
// nothing else (files a person put beside the entries stay local).
func (s Sharing) Shares(rel string) bool {
	switch rel {
	case Marker, ".gitignore":
		return true
	}
	first, rest, ok := strings.Cut(rel, "/")
	if !ok {
		return false
	}
	scope, rest, ok := strings.Cut(rest, "/")
	if !ok || !s.ShareScope(scope) {
		return false
	}
	switch first {
	case "artifacts":
		return s.Turns
	case EntriesDir:
		if s.Turns {
			return true
		}
		p, err := ParsePath(rel)
		if err != nil {
			// Not an entry file (a note a person dropped in): its
			// directory decides.
			d, _, _ := strings.Cut(strings.TrimPrefix(rest, deletedDir+"/"), "/")
			k, _ := kindOfDir(d)
			return k != KindTurn && k != KindSummary
		}
		return p.Kind != KindTurn && p.Kind != KindSummary
	}
	return false
}

// Repo is the store's git repository, for the use cases that work on its
// history beyond single commits (a sync's merge).
func (s *Store) Repo() *gitrepo.Repo { return s.repo }

// CommitAsIs records files as they are on disk, changed, added or removed
// by hand, in one commit; a path whose file is gone is recorded as removed.
// The caller holds the store lock.
func (s *Store) CommitAsIs(paths []string, subject string, trailers ...Trailer) (string, error) {
	if len(paths) == 0 {
		return "", nil
	}
	changes := make([]gitrepo.Change, 0, len(paths))
	for _, p := range paths {
		_, err := os.Lstat(filepath.Join(s.Root, filepath.FromSlash(p)))
		changes = append(changes, gitrepo.Change{Path: p, Delete: errors.Is(err, fs.ErrNotExist)})
	}
	var b strings.Builder
	b.WriteString(subject + "\n\nMira-Command: " + s.Command + "\n")
	for _, t := range trailers {
		if t.Value != "" {
			b.WriteString(t.Key + ": " + strings.ReplaceAll(t.Value, "\n", " ") + "\n")
		}
	}
	h, err := s.repo.Commit(changes, b.String(), s.sig())
	if errors.Is(err, gitrepo.ErrNothingToCommit) {
		return "", nil
	}
	if err != nil && !errors.Is(err, gitrepo.ErrIndexStale) {
		return "", err
	}
	return h, nil
}

// Signature is who the store's commits are by, now.
func (s *Store) Signature() gitrepo.Signature { return s.sig() }
