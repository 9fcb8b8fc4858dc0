// Package ctx plans the memory context of an LLM prompt: from candidate
// records (retrieved memories, pins, open corrections, goals and tasks, the
// latest summary, text given on input) it chooses what fits in a token
// budget, renders it as a Markdown block, and explains every choice.
//
// The budget is exact: tokens are counted with a real tiktoken encoding
// (o200k_base by default), loaded from data compiled into the binary on
// first use, and the rendered block, headings and delimiters included,
// never has more tokens than the budget.
//
// A plan lists every candidate as included or left out, with a reason and
// its token cost, under an id that hashes everything the output depends on.
// The output is deterministic: the same items and options give the same
// bytes, whatever the order of the items. Stable material (pins,
// corrections, goals, tasks, summaries) comes first, oldest first, and
// query-dependent memories last, so that a provider's prompt cache keeps
// matching the beginning of the block from one request to the next.
//
// Items that share an atom (a tool call and its result, a turn and its
// reply) are included or left out together.
//
// Code takes part too: the code map (module tree and central symbols)
// sits with the stable sections, before the given text, and the code cards
// retrieved for the query (signature, doc, place, and in heavy mode their
// excerpt or body) come last. A card or a map is never cut: a card that
// does not fit is shown thin (signature, doc and place only) or left out,
// and a map that does not fit is left out.
//
// # The prompt
//
// The block opens with a heading and a paragraph telling the model how to
// read it; then come the sections that have items, each under a "##"
// heading, each item under a "###" line with its provenance:
//
//	## Retrieved memories for "billing export"
//
//	### fact · 01JD3ZK4Q8 · 2026-11-06 · scope global · project shop · source cli
//	> We chose PostgreSQL for JSONB.
//	> MySQL lacked the operators we needed.
//	… [card: 68 of 410 characters]
//
// A memory's text appears only on lines beginning with ">", one per line
// of the text, line breaks of every kind normalized and control characters
// removed. Every other line is written by the planner, so a memory cannot
// close its block, open a section or forge a note, and the opening
// paragraph says that quoted text is data, not instructions. Lines
// beginning with "…" say what was shortened: a card, or a truncation with
// the tokens kept and the total.
//
// The package does no I/O: mira-context reads the records, adds those of
// the store, and prints one of the renderings of the Plan that Build
// returns.
package ctx
