package mem

import (
	"io/fs"
	"os"
	"path/filepath"
)

// A store holds what its owner chose to remember: like a password store or
// a GnuPG home it is private to its owner, whatever the umask. Every
// directory Mira makes in it is DirMode and every file FileMode.
const (
	DirMode  os.FileMode = 0o700
	FileMode os.FileMode = 0o600
)

// MakePrivate takes away every access of other users to the store at root
// (a store made before stores were private, or a clone): it clears the
// group and other permission bits of root and of everything under it.
// It does nothing and reports false when root is already private, when it
// belongs to another user, or on a system without Unix permissions.
// root is changed last, so that a repair cut short is done again by the
// next command.
func MakePrivate(root string) (bool, error) {
	fi, err := os.Lstat(root)
	if err != nil {
		return false, err
	}
	if !unixModes || !fi.IsDir() || fi.Mode().Perm()&0o077 == 0 || !ownedBySelf(fi) {
		return false, nil
	}
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if path != root && os.IsNotExist(err) {
				return nil // removed meanwhile
			}
			return err
		}
		if path == root || d.Type()&fs.ModeSymlink != 0 {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			if os.IsNotExist(err) {
				return nil
			}
			return err
		}
		if m := info.Mode().Perm(); m&0o077 != 0 {
			if err := os.Chmod(path, m&^0o077); err != nil && !os.IsNotExist(err) {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return false, err
	}
	return true, os.Chmod(root, fi.Mode().Perm()&^0o077)
}
