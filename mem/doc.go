// Package mem is Mira's memory store: Markdown files with YAML front matter
// in a git repository. The files are the source of truth; everything else
// (the search index, embeddings) is derived from them and disposable.
//
// This comment is the on-disk format. A tool that follows it can read and
// write a store side by side with Mira.
//
// # Directory
//
// A store is a directory (default $XDG_DATA_HOME/mira, i.e.
// ~/.local/share/mira) that is a git repository with branch main:
//
//	.git/
//	.gitignore        .index/  .lock  .lock.*  *.tmp  .sync-*  plans/
//	.mira-store       the marker: this directory is a Mira store (committed)
//	.lock             the writer lock while a command is writing (not committed)
//	.index/           the disposable search index (not committed)
//	plans/            context plan log, and plans/calls/<scope>.jsonl the
//	                  agent's call records (not committed)
//	entries/<scope>/<kind-dir>/<created>__<id>.md
//	entries/<scope>/turns/<role>/<created>__<id>.md
//	entries/<scope>/summaries/<level>/<created>__<id>.md
//	entries/<scope>/deleted/<kind-dir>/...        tombstones, same shape below
//	artifacts/<scope>/<id>.<ext>                   large tool outputs, committed
//	                                               with the tool turn that made them
//
// Mira creates a store only in a directory that does not exist or is
// empty, writing .gitignore and .mira-store in the first commit, and opens
// as a store only a git repository with .mira-store, or with the
// .gitignore above (stores made before the marker). Any other directory,
// a code repository above all, is refused and left untouched; commands
// that only read never create a store.
//
// A store that cannot be written (a read-only mount) is read through an
// index kept in the user's cache directory ($XDG_CACHE_HOME/mira/index/).
//
// <scope> is a bucket name: "global" (the default), a project name or a
// conversation id; it matches [A-Za-z0-9][A-Za-z0-9._-]{0,127} and is never
// "deleted". <kind-dir> is the plural of the kind: facts, preferences,
// decisions, corrections, goals, tasks, notes, turns, summaries. Turns sit in
// a directory per role (user, assistant, tool), summaries per level (L1, L2,
// L3). <created> is the creation time in UTC as yyyymmddThhmmssZ and <id> the
// entry's id, so a directory listing sorts by time. Files are UTF-8.
//
// # Entry files
//
// An entry file starts with a line "---", then a YAML mapping (the front
// matter), then a line "---", then the body: the memory's text, ending with
// one newline. Example:
//
//	---
//	id: 01JD3ZK4Q8V6N2M7T5R9W1X0YB
//	kind: decision
//	scope: global
//	created_at: 2026-11-21T10:00:00Z
//	project: shop
//	source: cli
//	tags: [db]
//	---
//	We chose PostgreSQL for JSONB.
//
// Fields (all optional in a hand-written file unless said otherwise):
//
//	id              unique, time-sortable: a ULID (26 characters, Crockford
//	                base 32) whose time part is the creation time. When
//	                missing it is taken from the file name after "__".
//	kind            fact, preference, decision, correction, goal, task, note,
//	                turn or summary; when missing, taken from the directory.
//	scope           when missing, taken from the directory.
//	created_at      RFC 3339 time; dates (2026-11-21) are read as midnight UTC.
//	updated_at      RFC 3339 time of the last rewrite of the text.
//	tags            list of strings (a single string is read as one tag).
//	project         the project the memory was made in (see DetectProject).
//	source          provenance: cli, agent, extract, summarize, import, ...
//	role            turns: user, assistant or tool.
//	status, priority goals and tasks.
//	pin             sticky (always in context) or leased (until pin_until or
//	                pin_task, whichever comes first; it needs one of them).
//	pin_until       RFC 3339 time a leased pin ends.
//	pin_task        id of a goal or task: the leased pin ends when that
//	                task is closed or no live memory has the id.
//	level           summaries: L1, L2 or L3.
//	replaced_by     tombstones: the id of the entry that replaced this one.
//	deleted_at      tombstones: RFC 3339 time of deletion.
//	deleted_reason  tombstones: why (free text; "replaced", "evicted", ...).
//
// Commands add fields of their own, which other tools may ignore:
//
//	covers, covers_from, covers_until, detail, model, input_tokens,
//	output_tokens   summaries: the ids of the turns and facts (or, for L2
//	                and L3, the summaries) a summary covers, the time span of
//	                that material (covers_until is the watermark), the level
//	                of detail, the model or "extractive", and token counts.
//	extracted_at    user turns read by mira-remember --extract.
//	extracted_from  facts it extracted: the turn they came from (one id, or a
//	                list of ids when written by hand or imported); the index
//	                keys those turns by the fact (index/facts.go).
//	tool_calls, tool_call_id, tool_name, is_error, denied, artifacts, model,
//	no_text, interrupted
//	                the agent's turns: what the assistant called and what
//	                each call returned, so a conversation can be replayed.
//	plan            assistant turns: the id of the call record of the request
//	                the turn answers (plans/calls/<scope>.jsonl, not
//	                committed). Optional: turns without it, or whose record
//	                is gone, are read as any other.
//
// Any other field is the user's: Mira keeps it, in its place and spelling,
// whenever it rewrites a file. Writers put known fields in the order above
// and times in UTC. A file whose front matter is not a YAML mapping, or
// whose known fields have the wrong type (a list where one value belongs,
// an unknown kind, an unparsable time), is broken: readers report it with
// its path and reason and skip it; writers never rewrite or delete it.
//
// # Changes
//
// Every change is one git commit on main, made while holding the lock:
//
//  1. Take the lock: create .lock with O_EXCL, holding one JSON line
//     {"pid":N,"host":"...","command":"...","time":"RFC 3339"}. If it exists
//     and its holder is alive, wait and retry; give up after the lock
//     timeout (Mira exits 11). A lock whose pid is dead on the same host, or
//     older than an hour, is stale: rename it aside, then remove it.
//  2. Write each file atomically: a temporary file in the same directory,
//     fsync, rename over the final name, fsync the directory.
//  3. Commit exactly the changed paths with the message
//     "<verb>: <what>" (e.g. `remember: decision 01J9… "We chose…"`), a
//     blank line and trailers: Mira-Command (always), Mira-Source,
//     Mira-Model (when an LLM decided), Mira-Usage (its tokens:
//     "requests=N prompt=N completion=N cached=N"), Mira-Reason. Move refs/heads/main
//     with compare-and-swap and update .git/index for the changed paths so
//     that `git status` stays clean. Append the commit, its parent and the
//     paths it changed to .git/mira-changes (a line each, with a CRC), so
//     that readers learn what changed since a recent commit without
//     diffing trees; a commit missing from it (made by git, or by another
//     tool) only costs them that diff.
//  4. Remove the lock.
//
// Nothing is ever destroyed. Forgetting moves a file from
// entries/<scope>/<kind-dir>/... to entries/<scope>/deleted/<kind-dir>/...
// and adds deleted_at and deleted_reason. Replacing writes the new entry
// and tombstones the old one with replaced_by set to the new id. Exact
// duplicates (the same text after trimming white space, in the same scope
// and kind) are not stored twice.
//
// Anyone may edit entry files by hand, commit or not: readers pick the
// changes up by comparing the index's recorded commit with HEAD and file
// sizes and modification times with the index's manifest.
//
// # Finding entries
//
// Programs need not split or build the paths of the Directory section
// themselves: ParsePath splits an entry file's path into its scope, kind
// directory, role or level, whether it is a tombstone, and the stamp and
// id of its name (EntryPath); ScopeDir, KindDir, TurnDir, SummaryDir and
// DeletedDir build the directories, and IsLiveDir tells a walker which
// directories hold live entries.
//
// A Store answers the questions callers ask of the layout, reading
// directories rather than files where only paths are wanted:
//
//	Scopes, HasScope        the scopes there are
//	Paths, Entries          a scope's live files of one kind (or all)
//	TurnPaths               a scope's turns in conversation order, across
//	                        the role directories (or of some roles)
//	TurnBefore, TurnAfter   a turn's neighbours in that order
//	Tombstones              a scope's files under deleted/
//	ReadAll                 the entries of listed paths
//
// Every listing is sorted by ComparePaths: by file name, which is the
// creation time and then the id, then by path. The queries take no lock,
// so they never wait for a writer; a hand-edited file that does not parse
// is handed to the bad callback of Entries or ReadAll and skipped, and
// the listing goes on.
//
// # Sharing
//
// mira-sync exchanges part of a store with a git remote (one branch,
// default main of remote origin). Shared are the marker and .gitignore,
// and the entries of the scopes that match sync.scopes (glob patterns;
// none means every scope), except conversation turns, the summaries made
// of them and artifacts, unless sync.turns is true: a person's chat stays
// on their machine. Everything else stays local, also in history: the
// remote's branch is never the local one. Each push is a commit whose
// tree is the remote's tree with the shared files replaced and whose only
// parent is the remote's commit, so the remote holds shared files and
// nothing else. The local store records the sync as a commit with two
// parents: its own previous commit and the commit it pushed (or, when it
// had nothing to send, the remote's). The merge base of the next sync is
// found from those parents, so nothing else keeps sync state.
//
// # Merging
//
// A sync merges above the merge base of the local commit and the remote's,
// looking only at the shared paths either side changed. Files are grouped
// by entry id (an entry's live file and its tombstone together); other
// files alone. Each group is decided by these rules, which give the same
// files whichever store makes the merge, so a merge repeated after a crash
// repeats its result:
//
//  1. Changed on one side only, or the same way on both: that version.
//  2. A live entry edited on both sides is merged field by field: a front
//     matter field (or the body) changed on one side takes that side's
//     value. A field changed on both sides differently takes the newer
//     side's value, except tags, which are joined, and updated_at and
//     deleted_at, which take the later time. The newer side is the one
//     whose updated_at (or deleted_at) is later than the base's, or else
//     whose newest commit is; equal times are broken by comparing the
//     files' bytes. So a pin on one side and a text edit on the other
//     give one entry with both.
//  3. When the bodies conflict, both texts survive: the newer version
//     stays at the id; the other becomes a new entry under deleted/ with
//     replaced_by naming the kept id, deleted_reason "merge: edited on
//     both sides; replaced by the newer version", created_at when that
//     version was made and an id whose time part is that time and whose
//     random part is taken from a hash of the entry's id and that
//     version's bytes.
//  4. Edited on one side and forgotten (or replaced) on the other: the
//     edit survives, the entry stays live and its tombstone goes; the
//     forget is reported. A file removed by hand loses to a change the
//     same way.
//  5. Summaries are derived: when both sides changed one, the newer
//     stands and the other stays in history; mira-summarize builds on the
//     merged material next time instead of merging two summaries.
//  6. A file that is not an entry, or does not parse, changed on both
//     sides: this store's version stands, the other's is in the merge
//     commit's second parent. The marker and .gitignore are always this
//     store's.
//  7. A live entry removed on one side without a tombstone (a plain git
//     rm) and left alone on the other becomes a tombstone of its last
//     version under deleted/, as mira-forget would have made it:
//     deleted_at is the time of the removing side's newest commit, and
//     deleted_reason "removed on the remote without a tombstone (git rm or
//     a hand edit); kept by mira-sync" (or "in this store" when the removal
//     was local). This is the one rule whose result names a side; a
//     tombstone removed by hand stays removed (history keeps it).
//
// Every rule other than 1 is a decision: it is reported (mira-sync prints
// it as a JSON line) and written into the merge commit's body, one line per
// entry ("- edit-edit 01J…: …"), and as "Mira-Merge:" trailers of the
// pushed commit. No file ever gets conflict markers. Files changed by hand
// are committed ("edit: N files changed by hand") before the merge, so it
// never overwrites them. What a push would add or change passes the secret
// scan first; a finding refuses the push and names the file and entry.
//
// A sync holds the store lock from the fetch to its commit. A sync killed
// midway leaves at worst a pushed commit the store has not recorded (the
// next sync merges it again to the same files), a journal that Recover
// rolls back like any writer's, or a lock of git's on the remote's
// tracking ref, which the next sync removes.
package mem
