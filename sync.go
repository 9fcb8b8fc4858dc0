package mira

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing/filemode"

	"github.com/miramem/mira/internal/gitremote"
	"github.com/miramem/mira/internal/gitrepo"
	"github.com/miramem/mira/internal/secret"
	"github.com/miramem/mira/mem"
)

// SyncOptions tune one Sync.
type SyncOptions struct {
	// Remote is the git remote; empty means the configuration's
	// sync.remote, else origin.
	Remote string
	// Branch is the remote's branch; empty means sync.branch, else main.
	Branch string
	// Attempts bounds the pushes tried when the remote keeps moving
	// (each one after a new fetch and merge); zero means 5.
	Attempts int
}

// SyncResult is what a Sync did.
type SyncResult struct {
	Remote, Branch string
	// AbortedMerge is the commit of a git merge that was left unfinished
	// with conflicts (a hand-run git pull): it was undone, and what it
	// brought from the remote is merged by Mira's rules instead.
	AbortedMerge string
	// HandEdits are the files changed by hand that were committed first.
	HandEdits []string
	// Pulled are the files this store took from the remote; Pushed the
	// files the remote took from this store.
	Pulled, Pushed []string
	// Decisions are the entries both sides had changed differently and
	// how each was decided.
	Decisions []mem.Decision
	// Commit is the local merge commit ("" when there was none); Remote
	// commit the commit pushed ("" when nothing was pushed).
	Commit, RemoteCommit string
	// Attempts counts the fetch-merge-push rounds.
	Attempts int
}

// UpToDate reports whether the sync found nothing to do.
func (r *SyncResult) UpToDate() bool {
	return r.AbortedMerge == "" && len(r.HandEdits) == 0 && r.Commit == "" && r.RemoteCommit == ""
}

// Errors of Sync that callers tell apart. They wrap what git said.
var (
	// ErrRemoteUnreachable: the remote could not be reached; the store
	// is untouched.
	ErrRemoteUnreachable = gitremote.ErrUnreachable
	// ErrRemoteAuth: the remote refused the credentials; the store is
	// untouched.
	ErrRemoteAuth = gitremote.ErrAuth
	// ErrRemoteBusy: every push lost the race with another writer of
	// the remote. The store is merged with what was fetched last; run
	// again.
	ErrRemoteBusy = errors.New("the remote kept moving")
)

// PushRefusedError is a push refused because what it would send looks
// like a credential. What came from the remote was merged; nothing left.
type PushRefusedError struct {
	// Findings name each entry file and what was found in it.
	Findings []string
}

func (e *PushRefusedError) Error() string {
	return "refusing to push what looks like a secret: " + strings.Join(e.Findings, "; ") +
		" (move it to a scope that is not shared, or remove it, and sync again)"
}

// Sharing is the part of the store the configuration shares.
func (m *Memory) Sharing() mem.Sharing {
	return mem.Sharing{Scopes: m.cfg.Sync.Scopes, Turns: m.cfg.Sync.Turns}
}

// Sync exchanges the shared part of the store with a git remote: it
// fetches the remote's branch, merges it entry by entry (mem.Merge; never
// with conflict markers), pushes the result, and records the merge as a
// commit with two parents. It holds the store lock throughout, so the store
// is committed, clean and writable when it returns, whatever happened.
//
// What is pushed is never the local branch: it is a commit on top of the
// remote's, whose tree is the remote's with the shared files replaced
// (Sharing), so files of scopes that are not shared never reach the
// remote, not even in history. Files changed by hand are committed first.
// The secret scan runs over every file the push would change.
func (m *Memory) Sync(ctx context.Context, opt SyncOptions) (*SyncResult, error) {
	res := &SyncResult{
		Remote: cmp.Or(opt.Remote, m.cfg.Sync.Remote, "origin"),
		Branch: cmp.Or(opt.Branch, m.cfg.Sync.Branch, "main"),
	}
	share := m.Sharing()
	if err := share.Check(); err != nil {
		return nil, &InvalidError{Err: err}
	}
	attempts := cmp.Or(opt.Attempts, 5)
	g := &gitremote.Git{Dir: m.home}
	if _, err := g.RemoteURL(ctx, res.Remote); err != nil {
		if errors.Is(err, gitremote.ErrNoRemote) {
			return nil, &InvalidError{Field: "remote", Err: err}
		}
		return nil, err
	}
	unlock, err := m.lock(ctx)
	if err != nil {
		return nil, err
	}
	defer unlock()
	tracking := gitremote.TrackingRef(res.Remote, res.Branch)
	m.removeRefLocks(tracking)
	repo := m.st.Repo()

	for res.Attempts = 1; ; res.Attempts++ {
		theirs, err := m.fetch(ctx, g, res, tracking)
		if err != nil {
			return res, err
		}
		if res.Attempts == 1 {
			// Only now that the remote answered: an unreachable one
			// leaves the store untouched. A git merge stopped by
			// conflicts makes every write fail; undo it and merge here.
			if res.AbortedMerge, err = g.AbortMerge(ctx); err != nil {
				return res, fmt.Errorf("undo the unfinished git merge: %w", err)
			}
			if err := m.commitHandEdits(ctx, g, res); err != nil {
				return res, err
			}
		}
		head, err := repo.Head()
		if err != nil {
			return res, err
		}
		p, err := m.planMerge(head, theirs, share)
		if err != nil {
			return res, err
		}
		res.Decisions = p.decisions
		if len(p.local) == 0 && len(p.remote) == 0 {
			return res, nil
		}
		if len(p.remote) == 0 {
			return res, m.commitMerge(p, head, theirs, res)
		}
		if found := m.scanPush(p); len(found) > 0 {
			// Take what came, send nothing.
			if len(p.local) > 0 && theirs != "" {
				if err := m.commitMerge(p, head, theirs, res); err != nil {
					return res, err
				}
			}
			return res, &PushRefusedError{Findings: found}
		}
		pushed, err := m.remoteCommit(p, theirs, res)
		if err != nil {
			return res, err
		}
		err = g.Push(ctx, res.Remote, res.Branch, pushed)
		if errors.Is(err, gitremote.ErrRejected) {
			if res.Attempts >= attempts {
				return res, fmt.Errorf("%w: push rejected %d times", ErrRemoteBusy, res.Attempts)
			}
			// Someone pushed meanwhile: fetch and merge again, after a
			// pause that keeps two syncs from colliding in step.
			select {
			case <-time.After(time.Duration(50+rand.IntN(200*res.Attempts)) * time.Millisecond):
			case <-ctx.Done():
				return res, ctx.Err()
			}
			continue
		}
		if err != nil {
			return res, fmt.Errorf("push to %s: %w", res.Remote, err)
		}
		res.RemoteCommit = pushed
		res.Pushed = p.remotePaths()
		return res, m.commitMerge(p, head, pushed, res)
	}
}

// fetch brings the remote's branch into its tracking ref and returns its
// commit, "" when the remote has no such branch yet.
func (m *Memory) fetch(ctx context.Context, g *gitremote.Git, res *SyncResult, tracking string) (string, error) {
	repo := m.st.Repo()
	err := g.Fetch(ctx, res.Remote, res.Branch)
	if errors.Is(err, gitremote.ErrNoBranch) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("fetch from %s: %w", res.Remote, err)
	}
	repo.Refresh()
	theirs, err := repo.Ref(tracking)
	if err != nil {
		return "", err
	}
	if theirs != "" {
		// A remote that is not a store (a code repository given by
		// mistake) is refused before anything of it is merged.
		tree, err := repo.TreeOf(theirs)
		if err != nil {
			return "", err
		}
		if _, ok, err := repo.FileAt(tree, mem.Marker); err != nil {
			return "", err
		} else if !ok {
			return "", &InvalidError{Field: "remote", Err: fmt.Errorf("%s/%s is not a Mira store: it has no %s", res.Remote, res.Branch, mem.Marker)}
		}
	}
	return theirs, nil
}

// removeRefLocks removes the lock of the tracking ref that a git fetch or
// push killed midway leaves (git would refuse to update the ref until
// someone deleted it). Syncs hold the store lock, so no other sync is
// using it.
func (m *Memory) removeRefLocks(tracking string) {
	dir := filepath.Join(m.home, ".git")
	os.Remove(filepath.Join(dir, filepath.FromSlash(tracking)+".lock"))
}

// commitHandEdits commits entry and artifact files changed by hand, so
// the merge sees them and never overwrites them.
func (m *Memory) commitHandEdits(ctx context.Context, g *gitremote.Git, res *SyncResult) error {
	paths, err := g.Changed(ctx, mem.EntriesDir, "artifacts")
	if err != nil {
		return fmt.Errorf("find hand edits: %w", err)
	}
	var keep []string
	for _, p := range paths {
		if _, err := mem.ParsePath(p); err == nil || strings.HasPrefix(p, "artifacts/") && !strings.Contains(p, "/.") {
			keep = append(keep, p)
		}
	}
	if len(keep) == 0 {
		return nil
	}
	_, err = m.st.CommitAsIs(keep, fmt.Sprintf("edit: %d files changed by hand", len(keep)), mem.Trailer{Key: "Mira-Reason", Value: "recorded before a sync"})
	if err != nil {
		return fmt.Errorf("commit hand edits: %w", err)
	}
	res.HandEdits = keep
	return nil
}

// mergePlan is the outcome of a merge before anything is written: the
// files to change here and on the remote (nil data: remove).
type mergePlan struct {
	local      map[string][]byte
	remote     map[string][]byte
	ours       map[string]gitrepo.File // the local files of every path looked at
	decisions  []mem.Decision
	theirsTree string
}

func (p *mergePlan) remotePaths() []string { return slices.Sorted(mapsKeys(p.remote)) }

func mapsKeys(m map[string][]byte) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// planMerge merges the shared files of head and theirs above their merge
// base, entry by entry.
func (m *Memory) planMerge(head, theirs string, share mem.Sharing) (*mergePlan, error) {
	repo := m.st.Repo()
	base := ""
	if head != "" && theirs != "" {
		var err error
		if base, err = repo.MergeBase(head, theirs); err != nil {
			return nil, err
		}
	}
	trees := make([]string, 3)
	for i, c := range []string{base, head, theirs} {
		t, err := repo.TreeOf(c)
		if err != nil {
			return nil, err
		}
		trees[i] = t
	}
	p := &mergePlan{local: map[string][]byte{}, remote: map[string][]byte{}, ours: map[string]gitrepo.File{}, theirsTree: trees[2]}
	if trees[1] == trees[2] {
		return p, nil
	}
	changed := map[string]bool{}
	for i, side := range trees[1:] {
		if side == trees[0] {
			continue
		}
		ps, err := repo.DiffTrees(trees[0], side)
		if err != nil {
			return nil, err
		}
		if i == 1 {
			if err := m.checkLinks(side, ps); err != nil {
				return nil, err
			}
		}
		for _, x := range ps {
			if share.Shares(x) {
				changed[x] = true
			}
		}
	}
	// Group the changed paths: the files of one entry (its live file and
	// its tombstone) are decided together; any other file alone.
	groups := map[string][]string{}
	for x := range changed {
		key := "path:" + x
		if ep, err := mem.ParsePath(x); err == nil && ep.ID != "" {
			key = "id:" + ep.ID
		}
		groups[key] = append(groups[key], x)
	}
	oursTime, theirsTime := m.commitTime(head), m.commitTime(theirs)
	for _, key := range slices.Sorted(func(yield func(string) bool) {
		for k := range groups {
			if !yield(k) {
				return
			}
		}
	}) {
		paths := groups[key]
		slices.Sort(paths)
		g := mem.MergeGroup{Paths: paths, OursTime: oursTime, TheirsTime: theirsTime}
		if id, ok := strings.CutPrefix(key, "id:"); ok {
			g.ID = id
		}
		var files [3]map[string][]byte
		var oursFiles map[string]gitrepo.File
		same := true
		for i, tree := range trees {
			files[i] = map[string][]byte{}
			found := map[string]gitrepo.File{}
			for _, x := range paths {
				f, ok, err := repo.FileAt(tree, x)
				if err != nil {
					return nil, err
				}
				if ok {
					found[x] = f
				}
			}
			if i == 1 {
				oursFiles = found
			}
			if i == 2 {
				for _, x := range paths {
					if oursFiles[x] != found[x] {
						same = false
					}
				}
			}
			for x, f := range found {
				data, err := repo.Blob(f.Hash)
				if err != nil {
					return nil, err
				}
				files[i][x] = data
			}
		}
		if same {
			continue // both sides hold the same files already
		}
		for x, f := range oursFiles {
			p.ours[x] = f
		}
		g.Base, g.Ours, g.Theirs = files[0], files[1], files[2]
		r, err := mem.Merge(g)
		if err != nil {
			return nil, err
		}
		if r.Decision != nil {
			p.decisions = append(p.decisions, *r.Decision)
		}
		all := slices.Clone(paths)
		for x := range r.Files {
			if !slices.Contains(all, x) {
				all = append(all, x)
			}
		}
		for _, x := range all {
			want, keep := r.Files[x]
			if !strings.HasPrefix(x, mem.EntriesDir+"/") && !strings.HasPrefix(x, "artifacts/") {
				// Files beside the entries (.gitignore, the marker)
				// are this store's: its version is the one shared.
				want, keep = g.Ours[x]
			}
			o, inOurs := g.Ours[x]
			if !inOurs {
				if d, err := m.readTree(trees[1], x); err == nil && d != nil {
					o, inOurs = d, true
				}
			}
			t, inTheirs := g.Theirs[x]
			if !slices.Contains(paths, x) {
				if d, err := m.readTree(trees[2], x); err == nil && d != nil {
					t, inTheirs = d, true
				}
			}
			if keep != inOurs || keep && !bytes.Equal(want, o) {
				p.local[x] = wantOrNil(want, keep)
			}
			if keep != inTheirs || keep && !bytes.Equal(want, t) {
				p.remote[x] = wantOrNil(want, keep)
			}
		}
	}
	return p, nil
}

// checkLinks refuses a remote tree that brings a symbolic link or a
// submodule where a store holds only directories and regular files: under
// entries/ or artifacts/, or in their place. Merged, it would turn a
// directory of the store into a link that later writes follow out of the
// store, and every file below it would look removed. ps are the paths the
// remote changed (a directory that became a link is reported as the link).
func (m *Memory) checkLinks(tree string, ps []string) error {
	repo := m.st.Repo()
	for _, x := range ps {
		top, _, _ := strings.Cut(x, "/")
		if top != mem.EntriesDir && top != "artifacts" {
			continue
		}
		mode, hash, ok, err := repo.EntryAt(tree, x)
		if err != nil {
			return err
		}
		if !ok {
			continue
		}
		switch mode {
		case filemode.Symlink:
			target, _ := repo.Blob(hash)
			return &InvalidError{Field: "remote", Err: fmt.Errorf("%s is a symbolic link (to %q) on the remote; a store holds only directories and regular files, so nothing was merged (replace it with the directory or file it stands for, on the remote)", x, target)}
		case filemode.Submodule:
			return &InvalidError{Field: "remote", Err: fmt.Errorf("%s is a submodule on the remote; a store holds only directories and regular files, so nothing was merged", x)}
		}
	}
	return nil
}

func wantOrNil(data []byte, keep bool) []byte {
	if !keep {
		return nil
	}
	if data == nil {
		return []byte{}
	}
	return data
}

// readTree reads the file at x in tree, nil when there is none.
func (m *Memory) readTree(tree, x string) ([]byte, error) {
	repo := m.st.Repo()
	f, ok, err := repo.FileAt(tree, x)
	if err != nil || !ok {
		return nil, err
	}
	return repo.Blob(f.Hash)
}

// commitTime is when a commit was made, zero for none.
func (m *Memory) commitTime(commit string) time.Time {
	if commit == "" {
		return time.Time{}
	}
	t, _ := m.st.Repo().CommitTime(commit)
	return t
}

// scanPush runs the secret scan over every file the push would add or
// change, and names each finding's file and entry.
func (m *Memory) scanPush(p *mergePlan) []string {
	var out []string
	for _, x := range p.remotePaths() {
		data := p.remote[x]
		if data == nil {
			continue
		}
		var fs []secret.Finding
		who := x
		if e, err := mem.Parse(x, data); err == nil {
			fs = scanEntry(e)
			who = fmt.Sprintf("%s (%s %s)", x, e.Kind, e.ID)
		} else {
			fs = secret.Scan(string(data))
		}
		for _, f := range fs {
			out = append(out, who+": "+f.String())
		}
	}
	return out
}

// remoteCommit writes the commit to push: the remote's tree with the
// planned changes, on top of the remote's commit.
func (m *Memory) remoteCommit(p *mergePlan, theirs string, res *SyncResult) (string, error) {
	repo := m.st.Repo()
	var edits []gitrepo.TreeEdit
	for _, x := range p.remotePaths() {
		data := p.remote[x]
		if data == nil {
			edits = append(edits, gitrepo.TreeEdit{Path: x})
			continue
		}
		f, ok := p.ours[x]
		if !ok || !blobIs(repo, f.Hash, data) {
			h, err := repo.WriteBlob(data)
			if err != nil {
				return "", err
			}
			f = gitrepo.File{Hash: h, Mode: 0o100644}
		}
		edits = append(edits, gitrepo.TreeEdit{Path: x, File: f})
	}
	tree, err := repo.EditTree(p.theirsTree, edits)
	if err != nil {
		return "", err
	}
	var parents []string
	if theirs != "" {
		parents = []string{theirs}
	}
	host, _ := os.Hostname()
	msg := fmt.Sprintf("sync: from %s: %d files", cmp.Or(host, "a store"), len(edits))
	return repo.CommitTree(tree, parents, msg+"\n\n"+decisionLines(res.Decisions)+"Mira-Command: "+m.st.Command+"\n", m.st.Signature())
}

// blobIs reports whether the blob hash holds data.
func blobIs(repo *gitrepo.Repo, hash string, data []byte) bool {
	b, err := repo.Blob(hash)
	return err == nil && bytes.Equal(b, data)
}

func decisionLines(ds []mem.Decision) string {
	if len(ds) == 0 {
		return ""
	}
	var b strings.Builder
	for _, d := range ds {
		b.WriteString("Mira-Merge: " + d.String() + "\n")
	}
	return b.String()
}

// commitMerge writes the files the merge changes here and commits them
// with the local commit and other as parents.
func (m *Memory) commitMerge(p *mergePlan, head, other string, res *SyncResult) error {
	if other == "" {
		return nil
	}
	tx := m.st.Begin(false)
	for _, x := range slices.Sorted(mapsKeys(p.local)) {
		var err error
		if p.local[x] == nil {
			err = tx.Remove(x)
		} else {
			err = tx.Put(x, p.local[x])
		}
		if err != nil {
			tx.Rollback()
			return err
		}
	}
	subject := fmt.Sprintf("sync: merge %s/%s: %d files here, %d there", res.Remote, res.Branch, len(p.local), len(p.remote))
	if n := len(res.Decisions); n > 0 {
		subject += fmt.Sprintf(", %d decided", n)
	}
	var body strings.Builder
	for _, d := range res.Decisions {
		body.WriteString("- " + d.String() + "\n")
	}
	hash, err := tx.CommitMerge(subject, body.String(), []string{other}, mem.Trailer{Key: "Mira-Source", Value: res.Remote + "/" + res.Branch})
	if err != nil {
		return err
	}
	res.Commit = hash
	res.Pulled = slices.Sorted(mapsKeys(p.local))
	return nil
}

// CloneOptions tune a Clone.
type CloneOptions struct {
	// Remote names the remote in the new store (default origin); Branch
	// is the branch cloned (default main).
	Remote, Branch string
}

// Clone starts a store at home from a remote that holds one: the clone is
// made beside home and moved into place once it is complete and has
// mem.Marker, so a failed or killed clone leaves no store behind. home
// must not exist or be empty.
func Clone(ctx context.Context, url, home string, opt CloneOptions) error {
	remote, branch := cmp.Or(opt.Remote, "origin"), cmp.Or(opt.Branch, "main")
	abs, err := filepath.Abs(home)
	if err != nil {
		return err
	}
	if ents, err := os.ReadDir(abs); err == nil && len(ents) > 0 {
		return invalidf("cannot clone into %s: it is not empty", abs)
	} else if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	parent := filepath.Dir(abs)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return err
	}
	// Leftovers of clones killed midway.
	old, _ := filepath.Glob(filepath.Join(parent, "."+filepath.Base(abs)+".clone-*.tmp"))
	for _, o := range old {
		os.RemoveAll(o)
	}
	tmp, err := os.MkdirTemp(parent, "."+filepath.Base(abs)+".clone-*.tmp")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	dst := filepath.Join(tmp, "store")
	if err := gitremote.Clone(ctx, url, dst, remote, branch, nil); err != nil {
		if errors.Is(err, gitremote.ErrNoBranch) || strings.Contains(err.Error(), "not found in upstream") {
			return invalidf("clone %s: the remote has no branch %s: nothing to start from (sync an existing store to it first)", url, branch)
		}
		return fmt.Errorf("clone %s: %w", url, err)
	}
	if !mem.IsStore(dst) {
		return invalidf("clone %s: not a Mira store: it has no %s", url, mem.Marker)
	}
	// git made the clone as the umask says; a store is private.
	if _, err := mem.MakePrivate(dst); err != nil {
		return fmt.Errorf("clone %s: %w", url, err)
	}
	os.Remove(abs) // an empty directory given as home
	if err := os.Rename(dst, abs); err != nil {
		return fmt.Errorf("clone %s: %w", url, err)
	}
	return nil
}
