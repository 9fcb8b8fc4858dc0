// Package summarize keeps adaptive hierarchical summaries of a scope's
// conversation turns and facts, and applies the store's eviction limit.
//
// # Summaries in the store
//
// Summaries are ordinary entries of kind summary (source summarize) under
// entries/<scope>/summaries/L1|L2|L3/. Besides the usual front matter each
// says what it covers:
//
//	level           L1 (a chunk of material), L2 (a group of about five L1),
//	                L3 (the rolling summary of everything so far)
//	covers          ids of the entries it was made from: turns and facts
//	                for an L1, L1 summaries for an L2, the previous L3 and
//	                the newer L1/L2 summaries for an L3
//	covers_from     creation time of the oldest turn or fact it covers
//	covers_until    creation time of the newest turn or fact it covers
//	                (the watermark)
//	detail          how much material the run saw: brief, standard,
//	                detailed or hierarchical (see Choose)
//	model           the model that wrote it, or "extractive"
//	input_tokens    tokens of the text it was made from
//	output_tokens   tokens of the summary
//
// # No gap
//
// Turns and facts are covered only through L1 summaries: every turn or fact
// is listed in the covers of at most one live L1, and everything not listed
// in one is the buffer — new material that the next run summarizes. So
// every live turn is either covered by a summary or in the buffer, whatever
// the order in which turns arrive (an import of old turns lands in the
// buffer, not below the watermark). A new L3 folds the previous L3 with every
// newer top-level summary and replaces it (the old one is tombstoned with
// replaced_by), so a scope has at most one live L3. Summaries of a scope are
// created in strictly increasing created_at order, which makes "newer than
// the L3" well defined. State returns the top-level summaries and the
// buffer: a prompt built from both misses nothing.
//
// # Eviction
//
// A scope holding more than MaxEntries live entries loses its oldest turns
// and facts that a summary already covers: they are tombstoned with
// deleted_reason evicted (their text stays in the summaries and in git
// history). Summaries, pinned entries and other kinds are never evicted.
package summarize
