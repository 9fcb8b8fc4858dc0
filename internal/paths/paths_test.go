package paths

import (
	"os"
	"path/filepath"
	"testing"
)

func TestCacheHome(t *testing.T) {
	env := map[string]string{"XDG_CACHE_HOME": "/x/cache"}
	got, err := CacheHome(func(k string) string { return env[k] })
	if err != nil || got != filepath.Join("/x/cache", "mira") {
		t.Errorf("CacheHome with XDG_CACHE_HOME = %q, %v", got, err)
	}
	want, err := os.UserCacheDir()
	if err != nil {
		t.Skip("no user cache directory:", err)
	}
	got, err = CacheHome(func(string) string { return "" })
	if err != nil || got != filepath.Join(want, "mira") {
		t.Errorf("CacheHome = %q, %v, want %q", got, err, filepath.Join(want, "mira"))
	}
}
