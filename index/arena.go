package index

import "unsafe"

// A build's documents stay in memory from the moment they are read until
// the base file is written: at a million entries, a gigabyte of small
// strings and slices, some fifteen objects a document. Every cycle of the
// collector walked them all, and a rebuild spent more of its CPU marking
// them than building the index (a profile at 1M: 55% in the collector's
// mark phase). A build copies what it keeps of a document into an arena
// instead: large blocks without pointers, which the collector marks as one
// object each, and a block of string headers for the tags. Documents read
// again for an update are few and keep their own allocations.

// arenaBlock is the size of an arena's blocks: large enough that a
// million documents make a few hundred of them, small enough that the
// last one's waste does not count.
const arenaBlock = 1 << 20

// arena hands out strings and byte slices copied into large blocks. It is
// used by one goroutine. What it returns lives as long as anything refers
// to any part of its block.
type arena struct {
	buf  []byte   // the block being filled
	strs []string // the block of string headers being filled
}

// bytes returns a copy of b in the arena (nil for an empty b).
func (a *arena) bytes(b []byte) []byte {
	if len(b) == 0 {
		return nil
	}
	if len(b) > arenaBlock/8 {
		return append([]byte(nil), b...) // large: its own allocation
	}
	if cap(a.buf)-len(a.buf) < len(b) {
		a.buf = make([]byte, 0, arenaBlock)
	}
	n := len(a.buf)
	a.buf = append(a.buf, b...)
	return a.buf[n:len(a.buf):len(a.buf)]
}

// str returns a copy of s in the arena.
func (a *arena) str(s string) string {
	if s == "" {
		return ""
	}
	b := a.bytes(unsafe.Slice(unsafe.StringData(s), len(s)))
	return unsafe.String(unsafe.SliceData(b), len(b))
}

// list returns a copy of ss, the strings too, in the arena (nil for none).
func (a *arena) list(ss []string) []string {
	if len(ss) == 0 {
		return nil
	}
	const block = arenaBlock / 16 / 16 // string headers of 16 bytes
	if len(ss) > block/4 {
		out := make([]string, len(ss))
		for i, s := range ss {
			out[i] = a.str(s)
		}
		return out
	}
	if cap(a.strs)-len(a.strs) < len(ss) {
		a.strs = make([]string, 0, block)
	}
	n := len(a.strs)
	for _, s := range ss {
		a.strs = append(a.strs, a.str(s))
	}
	return a.strs[n:len(a.strs):len(a.strs)]
}

// vecInput is newVecInput with everything the document keeps copied into
// the arena, and its terms into terms (an arena of their own, which can go
// once the postings are laid out).
func (a *arena) vecInput(d Doc, lx lexed, terms *arena) vecInput {
	in := newVecInput(d, lx)
	in.path, in.id, in.kind, in.scope = a.str(in.path), a.str(in.id), a.str(in.kind), a.str(in.scope)
	in.project, in.role, in.pin = a.str(in.project), a.str(in.role), a.str(in.pin)
	in.content, in.text = a.str(in.content), a.str(in.text)
	in.tags, in.from = a.list(in.tags), a.list(in.from)
	in.terms = terms.bytes(in.terms)
	// A time's location is a pointer, and one parsed with an offset has
	// its own; the index uses the instant alone.
	in.created = in.created.UTC()
	return in
}
