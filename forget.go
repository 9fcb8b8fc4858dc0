package mira

import (
	"cmp"
	"context"

	"github.com/miramem/mira/internal/secret"

	"github.com/miramem/mira/mem"
)

// ForgetOptions tune one Forget.
type ForgetOptions struct {
	// Reason is recorded as deleted_reason and in the commit; default
	// "forgotten".
	Reason string
	// DryRun computes the operations and writes nothing.
	DryRun bool
	// AllowSecret records a reason even when it looks like a credential.
	AllowSecret bool
}

// ForgetResult is what a Forget did.
type ForgetResult struct {
	// Entries are the memories forgotten, as they were before.
	Entries []*mem.Entry
	Ops     []mem.Op
	Commit  string
}

// Forget tombstones memories by id in one commit: each file moves under
// entries/<scope>/deleted/ with deleted_at and the reason. An unknown or
// already deleted id makes an *InvalidError and nothing is written, and so
// does a reason that looks like a credential (a *SecretError, unless
// AllowSecret): the reason is written into the tombstone and the commit.
func (m *Memory) Forget(ctx context.Context, ids []string, opt ForgetOptions) (*ForgetResult, error) {
	if len(ids) == 0 {
		return nil, invalidf("nothing to forget: no ids")
	}
	if !opt.AllowSecret {
		if fs := secret.Scan(opt.Reason); len(fs) > 0 {
			for i := range fs {
				fs[i].Field = "reason"
			}
			return nil, &InvalidError{Err: &SecretError{Findings: fs}}
		}
	}
	reason := cmp.Or(opt.Reason, "forgotten")
	lk, done, err := m.lockLookup(ctx, opt.DryRun)
	if err != nil {
		return nil, err
	}
	defer done()
	tx := m.st.Begin(opt.DryRun)
	res := &ForgetResult{}
	seen := map[string]bool{}
	for _, id := range ids {
		if seen[id] {
			continue
		}
		seen[id] = true
		e, err := m.st.FindID(id, lk.pathOf(id))
		if err != nil {
			tx.Rollback()
			return nil, &InvalidError{Err: err}
		}
		if err := tx.Tombstone(e, reason, ""); err != nil {
			tx.Rollback()
			return nil, &InvalidError{Err: err}
		}
		res.Entries = append(res.Entries, e)
	}
	res.Ops = tx.Ops
	if opt.DryRun {
		return res, nil
	}
	hash, err := tx.Commit(mem.Subject("forget", tx.Ops), mem.Trailer{Key: "Mira-Reason", Value: reason})
	if err != nil {
		return nil, err
	}
	res.Commit = hash
	return res, nil
}
