package cli

import (
	"context"

	"github.com/miramem/mira"
)

// openContextCode opens the code index of the project of the working
// directory for mira-context, or returns nil when it cannot be opened (a
// warning says why) or was never built: a context takes code only from
// an index that exists.
func openContextCode(ctx context.Context, o *IO, m *mira.Memory) (*mira.Code, error) {
	wd, err := o.Getwd()
	if err != nil {
		return nil, nil
	}
	root := mira.ProjectRoot(wd)
	if !mira.CodeIndexed(root, "", o.Getenv) {
		return nil, nil
	}
	warn := NewWarner(o)
	code, err := mira.OpenCode(ctx, mira.CodeOptions{
		Root: root, Memory: m, Getenv: o.Getenv,
		Warn: func(path string, err error) { warn.Warn(path, err) },
	})
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		o.Warnf("warning: code index: %v; planning without code", err)
		return nil, nil
	}
	return code, nil
}
