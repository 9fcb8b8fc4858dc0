package mem

import "github.com/miramem/mira/internal/arena"

// Slab keeps entries that all live until the end of a large change and its
// report (a bulk load's): in blocks of 1,024 entries, their strings in an
// arena (package arena), so that the collector marks a few hundred objects
// where it marked several for each of a million records. The zero value is
// ready; a Slab is used by one goroutine at a time.
type Slab struct {
	a    arena.Arena
	slab []Entry
}

// Keep returns a copy of e kept in the slab.
func (s *Slab) Keep(e *Entry) *Entry {
	if len(s.slab) == cap(s.slab) {
		s.slab = make([]Entry, 0, 1024)
	}
	s.slab = append(s.slab, *e)
	k := &s.slab[len(s.slab)-1]
	for _, f := range []*string{&k.ID, &k.Kind, &k.Scope, &k.Project, &k.Source, &k.Role, &k.Status,
		&k.Priority, &k.Pin, &k.PinTask, &k.Level, &k.ReplacedBy, &k.DeletedReason, &k.Body, &k.Path} {
		*f = s.a.String(*f)
	}
	k.Tags = s.a.List(k.Tags)
	return k
}
