// Package gitrepo is the git history layer of the memory store.
//
// The store directory is an ordinary non-bare git repository whose work tree
// holds the entry files. The store writes those files itself (atomically) and
// then asks this package to record exactly the paths it changed as one
// commit. Everything is done with go-git's plumbing and a few files written by
// hand, never with go-git's worktree layer: a full worktree status costs
// hundreds of milliseconds on a store of ten thousand files, while a commit
// that touches a handful of paths only needs to
//
//   - hash the changed files into blobs,
//   - rewrite the trees on the paths to them, reusing every untouched subtree,
//   - write the commit object,
//   - move the branch with a compare-and-swap, and
//   - update .git/index for those paths, so that `git status` stays clean.
//
// # Crash safety
//
// A process killed at any point leaves a repository that `git fsck` accepts
// with HEAD on a complete commit; at worst some unreferenced (dangling)
// objects remain. This rests on the order of the steps and on how each file
// is written:
//
//   - Loose objects are written to a temporary file in their fan-out
//     directory, synced, and renamed into place, so an object file under its
//     final name is always complete. go-git's own object writer renames its
//     temporary file without syncing it, so after a power failure an empty
//     file could stand under an object's name, and since an object that
//     exists is never written again, later commits would refer to it. That
//     is why objects are written here.
//   - A commit of PackMin files or more writes its objects into one new pack
//     instead: the pack and its index are written under temporary names and
//     synced, then the index is renamed into place before the pack, so
//     neither git (which finds packs by their index) nor go-git (which finds
//     them by the pack) sees one without the other. Thousands of loose
//     objects cost a file each; at ten thousand that was most of a bulk
//     load's time.
//   - The branch is moved under git's lock for it, "<ref>.lock" (created
//     exclusively), after checking its current value while holding the
//     lock; the new value is written to a temporary file, synced and renamed
//     over the ref. go-git's reference writer truncates and rewrites the ref
//     file in place, so a kill between the two leaves an empty ref, and it
//     takes no lock git would respect; it is not used.
//   - .git/index is locked by creating .git/index.lock at the start of a
//     commit, as git does, and held until the end; the new index replaces the
//     old one by a rename. A commit therefore fails early, before writing
//     anything that matters, while a git command holds the index.
//   - The lock files this package creates name the process that made them,
//     from the moment they exist (each is hard-linked into place from a
//     temporary file holding that name) until they are removed (the new
//     content of a ref or of the index comes from a separate temporary file,
//     where git would rename the lock file itself). A lock left by a process
//     of this host that no longer runs is removed by the next commit, as is
//     any such lock older than ten minutes; git would keep refusing to work
//     until someone deleted it by hand. A lock of git's names nobody: where
//     /proc tells (Linux), it is removed once no process of this host has it
//     open, no git command has its working directory in the repository (a
//     `git commit` waiting for its editor holds .git/index.lock closed), and
//     it is two seconds old; elsewhere once it is ten minutes old.
//
// All objects are on disk before the ref moves, and the ref moves before the
// index changes (git commits in the same order), so a crash leaves either the
// old commit with the old index, or the new commit with an index that still
// describes the previous commit for the committed paths. In the second case
// the index lock of the dead process stays, and whoever meets it next
// (RepairIndex, which the store runs whenever a writer takes its lock, or
// the next commit, even one with nothing to record) rewrites the entries of
// the paths the current commit changed from that commit, then removes the
// lock. Until then `git status` lists those paths as deleted and untracked
// at once, and `git reset -q` would settle it as well.
//
// # Other git processes
//
// git commands may run in the store at any time. Their lock files are
// respected (ErrLocked), a branch they move makes Commit fail with
// ErrRefMoved instead of losing their commit, and a concurrent `git gc`
// cannot prune an object a commit is about to reuse: an existing loose object
// is touched, as git does, before a new tree refers to it.
//
// # Index
//
// .git/index is read and written by a small codec of this package (git's
// format is described in its Documentation/gitformat-index.txt); go-git's
// own codec took about 25 ms each way at ten thousand files, more than the
// rest of a commit. Only the entries of the committed paths change; all
// other entries, including changes staged by hand and their flags
// (assume-unchanged, skip-worktree, intent-to-add), stay as they were.
//
// Versions 2, 3 and 4 are read. The index is written as version 4 if it was
// read as version 4 (paths prefix-compressed, as someone asked for), else as
// version 3 when an entry has extended flags and version 2 otherwise, the
// way git chooses when it rewrites an index. No extension is written: the
// cache tree (TREE) and the untracked cache (UNTR) would go stale, the
// resolve-undo data (REUC), the fsmonitor state (FSMN) and the entry offset
// tables (EOIE, IEOT) describe the old file or its old entries, and an
// unknown optional extension cannot be known to stay valid. git rebuilds
// what it needs.
//
// An index that cannot be rewritten faithfully is rebuilt from the new
// commit's tree instead: a split index ("link" extension), a sparse index
// ("sdir"), another mandatory extension (one whose signature does not start
// with an upper-case letter), another version, a wrong checksum (an
// all-zero one, which git writes with index.skipHash, is accepted), entries
// out of order or anything else malformed, such as a file cut short. Entries
// rebuilt that way carry no stat data, which makes git compare those files
// by content the next time it looks, and no flags: in a sparse checkout,
// `git sparse-checkout reapply` marks the files outside it again. Stat data
// of entries that were racily clean in the old index is smudged the way git
// does it, by zeroing the recorded size.
package gitrepo
