// Package index is Mira's search index over the store's entry files: a
// disposable store of one row per entry (its fields, the postings of its
// words for BM25, and its vector), brought up
// to date with the files on every Open, rebuilt when it is missing,
// damaged or of an older format, and kept fresh by Watch while a watcher
// runs. Search is hybrid: lexical and vector candidates (a query's
// abbreviations and the names of kinds of software widened to their other
// forms and members, abbrev.go and vocab.go), fused, the query vector
// moved toward the best fused hit and the vector side fused again,
// weighted by recency, with bonuses for the query's project, for a day or
// month the query names and for a decision when it asks what was chosen,
// and diversified by MMR (see Ranking). A conversation turn's BM25 text
// carries the turn before it (Doc.Context, TurnOrder), and an entry that
// names the turns it was taken from (Doc.From) is a key of those turns in
// both halves (facts.go); vectors are found
// by an exact scan of the stored unit vectors, which a long-lived process
// makes through their 8-bit codes with the same result (q8.go). From
// 131,072 vectors on, a long-lived process's scan is not exact: a first
// pass over one bit per dimension keeps the best sixty-fourth of the
// vectors, and only those are ranked exactly (q1.go); on a generated
// store of a million entries it found all of the exact scan's 10 nearest
// rows and 99.9% of its 60 nearest (TestCoarseRecall). The sign codes
// are made in memory from the 8-bit codes, never written to disk.
//
// The index never reads the store's file format itself: it sees the store
// through the small Source interface, which the store implements, and
// leaves the meaning of entry paths (which are live entries, which are
// turns of which scope) to package mem.
//
// # Layout
//
// Everything lives under <root>/.index/ and can be deleted at any time:
//
//	.index/CURRENT            one line: the name of the active generation
//	.index/watch              the watcher's lease (JSON), while one runs
//	.index/recall.sock        a serving watcher's socket, and
//	.index/serve.{lock,log}   the lock it holds and the log of one started on
//	                          demand (not this package's; see cmd/internal/relay)
//	.index/cache/             vectors of external embedders, by text (below)
//	.index/g-<unixnano>/      a generation:
//	    meta.json             format version, indexed commit, counts, times
//	    manifest              path → size, mtime, id, sum of every indexed file
//	    manifest.log          the entries changed since, appended
//	    lock                  locked by every process that uses the generation
//	    vectors-<seq>         the rows, postings and vectors as of the last compaction
//	    vectors-<seq>.log     the changes since, appended
//	    hashes-<seq>          the base file's rows by content hash, for writers (finder.go)
//	    statsum               what the last stat pass that matched the manifest saw (statsum.go)
//	    model                 the built-in embedder's fitted model (embed.ReadModel)
//	    damaged               left by a search that found the vectors damaged
//
// A generation is built completely (Rebuild) before CURRENT is switched to
// it by an atomic rename, so a reader never sees a half-built index. Older
// generations are removed once no process has them open.
//
// meta.json holds {"version", "commit", "docs", "broken", "built_at",
// "updated_at", "embedder", "dim", "default_embedder", "fit_docs",
// "vectors", "pending", "vec_seq", "vec_log"}: the embedder's ID and the
// vectors' length, whether the built-in embedder chose them, the number of
// texts its model was fitted on (0: none), the documents with a vector and
// those whose embedding failed, and which vector files are current with
// the log's committed length. A generation whose version differs from
// FormatVersion is rebuilt, never trusted; the version changes whenever the
// mapping, the manifest, the meta or the vector files' format changes.
//
// The manifest starts with the line "mira-index-manifest 2" followed by one
// line per file, sorted by path, with tab-separated fields:
//
//	<size> <mtime unix ns> <flags> <id> <sum> <path> <broken reason>
//
// flags is "-" or "r": "r" marks a racy entry, one whose modification time
// was within RacyWindow of the moment it was looked at, so a later rewrite
// of the same size could carry the same time stamp; racy entries are read
// again by the next stat pass. sum is the hexadecimal docSum of the
// document indexed for the file (0 for a broken one): a file read again
// with its size and time unchanged (a racy entry, above all the many a
// large import leaves) whose document has the same sum is not indexed
// again; only its flags change. A path containing a tab, newline, backslash
// or leading double quote is written as a Go-quoted string. A non-empty
// broken reason means Source.Load failed: the file has no row and is
// reported by every refresh until it changes.
//
// An update appends the lines of the files it changed to manifest.log
// instead of writing the manifest again (14 MB at 100,000 entries): an
// entry line as above, or "-", a tab and the path of a file that is gone;
// the last line for a path wins. Once the log has grown past a sixteenth of
// the manifest, an update removes it and writes the manifest whole. A
// reader applies the log's lines in order up to the first that is not
// whole or not well formed (a crash during an append), and the process
// that read it then writes the manifest whole. A version that knows
// nothing of the log ignores it, and sees a manifest older than the index,
// which a refresh puts right (see Concurrency); a log it leaves beside a
// manifest it wrote whole makes entries look older still, or gone, and
// their files are indexed again.
//
// # Vectors
//
// Every live document has a row in the vector store: what the filters and
// the ranking need (path, id, kind, scope, project, role, pin, tags,
// creation time, the length of its BM25 text), the first 16 bytes of the
// SHA-256 of its embedded text, the store's hash of its text (for the
// duplicate check of writers, see Finder), and its vector unless its text
// has no words or its embedding failed. The postings of the rows' terms
// are kept with them (see Words). All integers are little-endian; a string
// is a uvarint length and its bytes. The base file vectors-<seq> is
//
//	"MIRAVEC\x00", u32 version (5), u32 dim, u32 rows, u32 vectors,
//	u32 length of the row section, u32 length of the postings section,
//	string embedder ID, rows (sorted by path), postings,
//	u32 CRC-32C of everything before,
//	0 to 3 zero bytes, so that the vectors start at a multiple of 4,
//	vectors × dim float32, u32 CRC-32C of the vectors
//
// where a row is path, id, kind, scope, project, uvarint tag count and the
// tags, a flags byte (1: has a vector, 2: pending, 4: creation time known,
// 8: names the entries it was taken from),
// the creation time as a zig-zag varint of Unix nanoseconds, the text
// hash, the content hash (Doc.Hash, a string), role, pin, the uvarint
// length of the BM25 text in terms and a u64 hash of that text, role and
// pin (what tells an update that the row is unchanged), and with flag 8 a
// uvarint count and the ids it names (Doc.From); the vectors follow in
// the order of the rows that have one. The log vectors-<seq>.log is a sequence of records: u32 payload length, u32
// CRC-32C of the payload, payload; a payload is 1, a row, its terms
// (uvarint count, then each term, sorted, as a string and its uvarint
// frequency) and its vector (a document added or changed), or 2 and a path
// (removed).
// Readers apply the base, then the log; a torn record after the committed
// length (meta's vec_log) is what a writer that crashed left, ignored by
// readers and cut off by the next writer, while a bad record before it is
// damage. When the log holds more than 256 records and more than an
// eighth of the rows, the writer folds it into vectors-<seq+1>, switches
// to it by the meta and removes the old files: appending costs the size of
// the change, compacting the whole store.
//
// Open checks the base file's header and size against the meta (cheap); a
// search reads and checks everything, and if it finds damage it searches
// by words, reports it through Options.Warn and leaves the "damaged" mark
// so that the next Open rebuilds.
//
// The vectors come from Options.Embedder or, when it is nil, the built-in
// embedder: a model (embed.Fit) fitted at every rebuild on all live texts
// in store order (scope, then creation time, then path), each scope's
// texts embedded as one sequence (embed.Model.EmbedSequence); below
// MinFitDocs entries the hashing embedder. Updates embed new texts with the
// frozen model, as a sequence where they are neighbours in the store, on
// their own otherwise. An Open that finds the store at RefitGrowth times
// the size the model was fitted on (or past MinFitDocs with hashing)
// builds a new generation with a new model; so does one that finds the
// vectors from another embedder than the configured one, since vectors of
// two embedders are never compared. The vectors of an external embedder
// are cached by (embedder ID, text hash) in .index/cache/, so that a text
// is never sent twice, even across rebuilds; when such an embedder fails,
// its documents are kept as "pending", searched by words, and embedded
// again by a later Open.
//
// # Words
//
// A document's BM25 text is its body and, for a conversation turn, the
// turn before it, analysed as English (textAnalyzer; irregular forms and
// spellings joined, wordForm). Its terms besides the words' begin with a
// byte no word has: "\x00d" and a day (YYYYMMDD) or "\x00m" and a month
// (YYYYMM) its body mentions (mentionedSpans), and for a turn with
// context "\x01" and each term of its own body, and "\x02", whose
// frequency is the number of those terms (addOwnTerms). The postings section
// of a base file is
//
//	u32 terms, u32 term offsets (terms+1), u32 postings offsets (terms+1),
//	the terms' bytes, the postings
//
// with the terms sorted; a term's postings are its uvarint document count,
// then for each document the uvarint difference of its row from the one
// before and the uvarint frequency of the term in it. A reader keeps the
// section as it is and finds a term by binary search, and keeps the
// postings of the log's rows in a map. A text search decodes the postings
// of its terms, skips dead rows, and scores the rest by BM25 (k1 1.2, b
// 0.75, the square root of the frequency as bleve takes it, the live
// documents' count and mean length) into an array by row, weighted by the
// query norm and by the share of the query's terms a row has; the rows'
// own fields filter. A compaction writes the postings of the live rows
// again, read back from the old postings and the log.
//
// # Freshness
//
// Open compares the indexed commit with Source.Head and asks Source.Diff
// for the paths committed since; unless a watcher holds a fresh lease (or
// Options.SkipStat is set), it also runs a stat pass (Source.Stat) and
// compares sizes and modification times with the manifest. Only the changed
// files are loaded (on every core when there are more than a few) and
// indexed, all in one update of the vector store, the manifest and the meta.
// A rebuild of a source that can (the store) lists the files without
// stating them and takes each one's size and time from the file as it reads
// it; its vectors go straight to their rows' places in the new base file,
// which gets its name once whole (vecPlacer).
//
// # Concurrency
//
// Processes coordinate through a lock (flock) on the generation's lock
// file (shared for readers, exclusive for writers), always with a timeout: an
// Open that has nothing to update opens the index read-only; one that has
// changes to apply opens it for writing, retries with backoff while another
// process holds it, and falls back to searching the current generation
// without the update (reporting the staleness through Options.Warn) rather
// than wait. The vector log (or a compacted base file), then the
// manifest, then the meta are written while the exclusive lock is held,
// the files each by an atomic rename (the logs by an append and a sync); a
// crash in between leaves a manifest older than the index, and the next
// refresh redoes the difference (or, if the document counts disagree,
// rebuilds). A search that finds the rows damaged leaves the "damaged"
// mark and answers from what it could read: the base file's rows and the
// log up to its first bad record. Only a meta whose commit moved without any file to index is
// written under the shared lock: every process that can hold it then would
// write the same thing.
//
// # Watching
//
// Watch applies changes as they happen and keeps the lease .index/watch,
// {"pid", "host", "started", "heartbeat"}, renewed every two seconds. A
// lease less than ten seconds old whose process is alive (when it runs on
// this host) lets readers skip the stat pass.
//
// A process that searches beside its own watcher passes Watch a Syncer:
// Sync has the watcher take in every change made so far before a search.
// Events reach the watcher a little after the change, so Sync writes a
// cookie file .sync-<pid>-<n> in the root and reads events until the
// cookie's: the kernel queues them in order. Such a process also passes
// Options.Keep, to its own batches too: it keeps the vectors and the model
// loaded from one Open to the next while the generation is unchanged, and
// the generation's lock held: shared while it reads, exclusive while its
// own writer updates, the searches of the process never waiting for it
// (keptLock). The lock goes before a writer elsewhere could wait on it
// long: after half a second unused; a writable one after 50 ms unused,
// or, once a second old, as soon as its last user is done.
package index
