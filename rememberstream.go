package mira

import (
	"cmp"
	"context"
	"crypto/sha256"

	"github.com/miramem/mira/mem"
)

// RememberStream is Remember for a bulk load too large to hold at once:
// next returns the entries a part at a time (none: the end), and they are
// stored in one commit, each part's files made as the part comes
// (mem.Bulk), so that a load of a million entries holds a few hundred
// bytes for each instead of the entries. Each entry is checked and filled
// in as Remember does, an exact duplicate of a live memory or of an entry
// earlier in the stream is not stored twice, and the load is all or
// nothing: an error from next, from an entry or from ctx rolls back every
// part.
//
// stored is called with each entry of a part, in order, once the part's
// files are made: before the commit, so a caller that reports them holds
// the report until RememberStream returns nil. The entries are not kept;
// next may hand out new ones for each part. RememberStream returns the
// commit ("" when nothing was new). opt.Replace and opt.DryRun are
// Remember's alone.
func (m *Memory) RememberStream(ctx context.Context, next func() ([]*mem.Entry, error), opt RememberOptions, stored func(Remembered) error) (string, error) {
	if opt.Replace != "" || opt.DryRun {
		return "", invalidf("a stream of memories is stored as new memories: --replace and --dry-run take them at once")
	}
	if !mem.BulkAvailable() {
		return m.rememberAll(ctx, next, opt, stored)
	}
	opt.MaxBytes = cmp.Or(opt.MaxBytes, m.cfg.Remember.MaxBytes)
	if opt.UntilTask != "" {
		if err := m.checkLeaseTask(ctx, opt.UntilTask); err != nil {
			return "", err
		}
	}
	lk, done, err := m.lockLookup(ctx, false)
	if err != nil {
		return "", err
	}
	defer done()
	b, err := m.st.BeginBulk()
	if err != nil {
		return "", err
	}
	defer b.Rollback() // unless committed
	// An entry's key (scope, kind, text) as a 16-byte hash: a million
	// keys as strings took 150 MB.
	seen := map[[16]byte]struct{}{}
	total := 0
	var items []Remembered
	for {
		if err := ctx.Err(); err != nil {
			return "", err
		}
		part, err := next()
		if err != nil {
			return "", err
		}
		if len(part) == 0 {
			break
		}
		total += len(part)
		b.Expect(len(part))
		if err := eachEntry(part, func(e *mem.Entry) error { return prepare(e, opt, m.opt.Project) }); err != nil {
			return "", err
		}
		items = items[:0]
		add := make([]*mem.Entry, 0, len(part))
		for _, e := range part {
			fillKind(e)
			key := sha256.Sum256([]byte(e.Scope + "\x00" + e.Kind + "\x00" + mem.ContentHash(e.Body)))
			if _, ok := seen[[16]byte(key[:16])]; ok {
				continue // the same text twice in the stream
			}
			seen[[16]byte(key[:16])] = struct{}{}
			if dup := lk.duplicate(e); dup != nil {
				items = append(items, Remembered{Entry: dup, Duplicate: true})
				continue
			}
			items = append(items, Remembered{Entry: e})
			add = append(add, e)
		}
		if err := b.Add(add); err != nil {
			return "", err
		}
		for _, it := range items {
			if err := stored(it); err != nil {
				return "", err
			}
		}
	}
	if total == 0 {
		return "", invalidf("nothing to remember")
	}
	if b.Added() == 0 {
		return "", nil
	}
	return b.Commit(b.Subject("remember"), mem.Trailer{Key: "Mira-Source", Value: cmp.Or(opt.Source, "api")})
}

// rememberAll is RememberStream where a change cannot be made in parts:
// every part is held, then stored by Remember.
func (m *Memory) rememberAll(ctx context.Context, next func() ([]*mem.Entry, error), opt RememberOptions, stored func(Remembered) error) (string, error) {
	var all []*mem.Entry
	for {
		part, err := next()
		if err != nil {
			return "", err
		}
		if len(part) == 0 {
			break
		}
		all = append(all, part...)
	}
	res, err := m.Remember(ctx, all, opt)
	if err != nil {
		return "", err
	}
	for _, it := range res.Items {
		if err := stored(it); err != nil {
			return res.Commit, err // the commit stands
		}
	}
	return res.Commit, nil
}
