package index

import "github.com/miramem/mira/internal/arena"

// A build's documents stay in memory from the moment they are read until
// the base file is written: at a million entries, a gigabyte of small
// strings and slices, some fifteen objects a document. Every cycle of the
// collector walked them all, and a rebuild spent more of its CPU marking
// them than building the index (a profile at 1M: 55% in the collector's
// mark phase). A build copies what it keeps of a document into an arena
// instead (package arena). Documents read again for an update are few and
// keep their own allocations.

// arenaVecInput is newVecInput with everything the document keeps copied into
// the arena, and its terms into terms (an arena of their own, which can go
// once the postings are laid out).
func arenaVecInput(a *arena.Arena, d Doc, lx lexed, terms *arena.Arena) vecInput {
	in := newVecInput(d, lx)
	in.path, in.id, in.kind, in.scope = a.String(in.path), a.String(in.id), a.String(in.kind), a.String(in.scope)
	in.project, in.role, in.pin = a.String(in.project), a.String(in.role), a.String(in.pin)
	in.content, in.text = a.String(in.content), a.String(in.text)
	in.tags, in.from = a.List(in.tags), a.List(in.from)
	in.terms = terms.Bytes(in.terms)
	// A time's location is a pointer, and one parsed with an offset has
	// its own; the index uses the instant alone.
	in.created = in.created.UTC()
	return in
}
