// Package arena copies strings and byte slices into large blocks without
// pointers, for work that keeps millions of small values alive at once (a
// rebuild's documents, a bulk load's records). The collector marks a block
// as one object; each small value on its own was one more to mark at every
// cycle, and at a million entries marking them had been most of the CPU.
package arena

import "unsafe"

// Block is the size of an arena's blocks: large enough that a million
// small values make a few hundred of them, small enough that the last
// one's unused room does not count.
const Block = 1 << 20

// Arena hands out copies in shared blocks. It is used by one goroutine at
// a time. A copy lives as long as anything refers to any part of its block.
type Arena struct {
	buf  []byte   // the block being filled
	strs []string // the block of string headers being filled
}

// Bytes returns a copy of b (nil for an empty b), its capacity its length.
func (a *Arena) Bytes(b []byte) []byte {
	if len(b) == 0 {
		return nil
	}
	if len(b) > Block/8 {
		return append([]byte(nil), b...) // large: its own allocation
	}
	if cap(a.buf)-len(a.buf) < len(b) {
		a.buf = make([]byte, 0, Block)
	}
	n := len(a.buf)
	a.buf = append(a.buf, b...)
	return a.buf[n:len(a.buf):len(a.buf)]
}

// String returns a copy of s.
func (a *Arena) String(s string) string {
	if s == "" {
		return ""
	}
	b := a.Bytes(unsafe.Slice(unsafe.StringData(s), len(s)))
	return unsafe.String(unsafe.SliceData(b), len(b))
}

// List returns a copy of ss and of its strings (nil for none), its
// capacity its length.
func (a *Arena) List(ss []string) []string {
	if len(ss) == 0 {
		return nil
	}
	const block = Block / 16 / 16 // string headers of 16 bytes
	if len(ss) > block/4 {
		out := make([]string, len(ss))
		for i, s := range ss {
			out[i] = a.String(s)
		}
		return out
	}
	if cap(a.strs)-len(a.strs) < len(ss) {
		a.strs = make([]string, 0, block)
	}
	n := len(a.strs)
	for _, s := range ss {
		a.strs = append(a.strs, a.String(s))
	}
	return a.strs[n:len(a.strs):len(a.strs)]
}
