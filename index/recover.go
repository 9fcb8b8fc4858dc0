package index

import (
	"errors"
	"fmt"
)

// The index is derived data: any damage to its files must cost a rebuild,
// never the command. Checksums find damage before the files are decoded,
// but a decoder that meets bytes it cannot have written must not take the
// process down: safely turns a panic, in the calling goroutine, into a
// damagedError, which Open answers with a rebuild.
func safely(what string, fn func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = &damagedError{err: fmt.Errorf("%s: %v", what, r)}
		}
	}()
	return fn()
}

// IsDamaged reports whether err says the index's files are damaged: the
// next Open rebuilds them.
func IsDamaged(err error) bool {
	var d *damagedError
	return errors.As(err, &d) && !d.missing && !d.outdated
}
