package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/miramem/mira"
	"github.com/miramem/mira/mem"
)

// ForgetCmd is mira-forget.
type ForgetCmd struct {
	Common
	IDs    []string `arg:"" optional:"" name:"ID" help:"Ids of the memories to forget. Without them, ids are read from stdin (one per line, or JSONL records with an id)."`
	Reason string   `short:"r" help:"Why, recorded as deleted_reason." default:"forgotten"`
	DryRun bool     `name:"dry-run" short:"n" help:"Print the operations as JSONL and write nothing."`

	AllowSecret bool `name:"allow-secret" help:"Record the reason even when it looks like a credential."`
}

// Forget is the main of mira-forget.
func Forget(args []string, o *IO) int {
	return Main("mira-forget", "Forget memories: move them under deleted/ as tombstones, in one git commit.", &ForgetCmd{}, args, o)
}

func (c *ForgetCmd) run(ctx context.Context, o *IO) error {
	ids := c.IDs
	if len(ids) == 0 {
		if o.InTTY {
			return usagef("nothing to forget: give memory ids as arguments or on stdin")
		}
		var err error
		ids, err = readIDs(o)
		if err != nil {
			return err
		}
		if len(ids) == 0 {
			return usagef("nothing to forget: no ids on stdin")
		}
	}
	m, err := c.openWith(ctx, o, "mira-forget", "", openOptions{existing: true})
	if errors.Is(err, mira.ErrNoStore) {
		return usagef("%v: nothing to forget", err)
	}
	if err != nil {
		return err
	}
	defer m.Close()
	res, err := m.Forget(ctx, ids, mira.ForgetOptions{Reason: c.Reason, DryRun: c.DryRun, AllowSecret: c.AllowSecret})
	if se := (*mira.SecretError)(nil); errors.As(err, &se) {
		return usagef("--reason: %s", se.Explain("use --allow-secret if you are sure"))
	}
	if err != nil {
		return err
	}
	if c.DryRun {
		return writeOps(o, res.Ops)
	}
	return writeEntries(o, c.Output, res.Entries)
}

// readIDs reads ids from stdin: JSONL records (their id field) or one bare
// id per line.
func readIDs(o *IO) ([]string, error) {
	var ids []string
	var lineErr error
	data := new(strings.Builder)
	buf := make([]byte, 32<<10)
	for {
		n, err := o.In.Read(buf)
		data.Write(buf[:n])
		if err != nil {
			break
		}
	}
	for i, l := range strings.Split(data.String(), "\n") {
		l = strings.TrimSpace(l)
		if l == "" {
			continue
		}
		if strings.HasPrefix(l, "{") {
			var r mem.Record
			if err := r.UnmarshalJSON([]byte(l)); err != nil || r.ID == "" {
				if err == nil {
					err = fmt.Errorf(`record has no "id"`)
				}
				lineErr = &InputError{Name: "<stdin>", Line: i + 1, Err: err}
				break
			}
			ids = append(ids, r.ID)
			continue
		}
		ids = append(ids, strings.Fields(l)[0])
	}
	return ids, lineErr
}
