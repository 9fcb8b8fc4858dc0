// Package index is Mira's search index over the store's entry files: a
// disposable BM25 index (bleve, scorch) that is brought up to date with the
// files on every Open, rebuilt when it is missing, damaged or of an older
// format, and kept fresh by Watch while a watcher runs.
//
// The index never reads the store's file format itself: it sees the store
// through the small Source interface, which the store implements.
//
// # Layout
//
// Everything lives under <root>/.index/ and can be deleted at any time:
//
//	.index/CURRENT            one line: the name of the active generation
//	.index/watch              the watcher's lease (JSON), while one runs
//	.index/g-<unixnano>/      a generation:
//	    meta.json             format version, indexed commit, counts, times
//	    manifest              path → size, mtime, id of every indexed file
//	    bleve/                the bleve index
//
// A generation is built completely (Rebuild) before CURRENT is switched to
// it by an atomic rename, so a reader never sees a half-built index. Older
// generations are removed once no process has them open.
//
// meta.json holds {"version", "commit", "docs", "broken", "built_at",
// "updated_at", "embedder"}. A generation whose version differs from
// FormatVersion is rebuilt, never trusted; the version changes whenever the
// mapping, the manifest or the meta format changes.
//
// The manifest starts with the line "mira-index-manifest 1" followed by one
// line per file, sorted by path, with tab-separated fields:
//
//	<size> <mtime unix ns> <flags> <id> <path> <broken reason>
//
// flags is "-" or "r": "r" marks a racy entry, one whose modification time
// was within RacyWindow of the moment it was looked at, so a later rewrite
// of the same size could carry the same time stamp; racy entries are read
// again by the next stat pass. A path containing a tab, newline, backslash
// or leading double quote is written as a Go-quoted string. A non-empty
// broken reason means Source.Load failed: the file is not in the bleve
// index and is reported by every refresh until it changes.
//
// # Freshness
//
// Open compares the indexed commit with Source.Head and asks Source.Diff
// for the paths committed since; unless a watcher holds a fresh lease (or
// Options.SkipStat is set), it also runs a stat pass (Source.Stat) and
// compares sizes and modification times with the manifest. Only the changed
// files are loaded and indexed, in batches of a thousand.
//
// # Concurrency
//
// Processes coordinate through the lock bbolt takes on the bleve index
// (shared for readers, exclusive for writers), always with a timeout: an
// Open that has nothing to update opens the index read-only; one that has
// changes to apply opens it for writing, retries with backoff while another
// process holds it, and falls back to searching the current generation
// without the update (reporting the staleness through Options.Warn) rather
// than wait. The bleve index, then the manifest, then the meta are written
// while the exclusive lock is held, the files each by an atomic rename; a
// crash in between leaves a manifest older than the index, and the next
// refresh redoes the difference (or, if the document counts disagree,
// rebuilds). Only a meta whose commit moved without any file to index is
// written under the shared lock: every process that can hold it then would
// write the same thing.
//
// # Watching
//
// Watch applies changes as they happen and keeps the lease .index/watch,
// {"pid", "host", "started", "heartbeat"}, renewed every two seconds. A
// lease less than ten seconds old whose process is alive (when it runs on
// this host) lets readers skip the stat pass.
package index
