package mem

import (
	"fmt"
	"os"
	"path/filepath"
)

// WriteFileAtomic writes data to name so that a reader, or a process killed
// at any moment, sees either the old file or the whole new one: a temporary
// file in the same directory is written, synced, closed and renamed over
// name, then the directory is synced so the rename itself is durable.
func WriteFileAtomic(name string, data []byte, perm os.FileMode) error {
	if err := writeFile(name, data, perm, true); err != nil {
		return err
	}
	return syncDir(filepath.Dir(name))
}

// writeFile writes data to a temporary file beside name and renames it into
// place, so name is never seen half written; with durable it syncs the file
// first (a batch syncs the file system once instead, see syncFS).
func writeFile(name string, data []byte, perm os.FileMode, durable bool) (err error) {
	dir := filepath.Dir(name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(name)+".*.tmp")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	if _, err = f.Write(data); err != nil {
		return fmt.Errorf("write %s: %w", tmp, err)
	}
	if err = f.Chmod(perm); err != nil {
		return err
	}
	if durable {
		if err = f.Sync(); err != nil {
			return fmt.Errorf("sync %s: %w", tmp, err)
		}
	}
	if err = f.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, name)
}

// syncDir makes a rename or create in dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("sync directory %s: %w", dir, err)
	}
	return nil
}
