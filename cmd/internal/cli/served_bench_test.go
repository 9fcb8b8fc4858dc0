package cli

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/miramem/mira"
	"github.com/miramem/mira/cmd/internal/relay"
	"github.com/miramem/mira/index"
	"github.com/miramem/mira/internal/synth"
	"github.com/miramem/mira/mem"
)

// BenchmarkServedRecall is the server's part of a served mira-recall, as
// recallRunner runs it for a client: the command line, the configuration,
// the project, the store, the search, the hits read and written as JSONL.
// What it leaves out is the socket and the wait for the watcher.
func BenchmarkServedRecall(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			home := servedStore(b, n)
			// A server keeps the records of files that have not changed
			// for two seconds (mira.RecordCache); a store this new would
			// have its hits read from their files each time.
			time.Sleep(2100 * time.Millisecond)
			keep := new(index.Keep)
			defer keep.Release()
			r := &recallRunner{o: &IO{Err: &bytes.Buffer{}}, keep: keep}
			req := relay.Request{
				Command: "mira-recall", Args: []string{"-k", "10", "postgres", "cache", "timeout"},
				Dir: b.TempDir(), Env: append(os.Environ(), "MIRA_HOME="+home, "XDG_CONFIG_HOME="+b.TempDir()),
			}
			ready := func() error { return nil }
			var out, errb bytes.Buffer
			for b.Loop() {
				out.Reset()
				errb.Reset()
				if code, ok := r.run(req, ready, &out, &errb); code != 0 || !ok {
					b.Fatalf("exit %d (served %v): %s", code, ok, errb.String())
				}
				if out.Len() == 0 {
					b.Fatal("no records")
				}
			}
		})
	}
}

// servedStore makes a store of n generated memories with its index built.
func servedStore(b *testing.B, n int) string {
	b.Helper()
	home := filepath.Join(b.TempDir(), "home")
	ctx := context.Background()
	m, err := mira.Open(ctx, mira.Options{Home: home, Config: &mira.Config{}, Getenv: func(string) string { return "" }})
	if err != nil {
		b.Fatal(err)
	}
	defer m.Close()
	var entries []*mem.Entry
	for _, text := range synth.Texts(n) {
		entries = append(entries, &mem.Entry{Kind: mem.KindNote, Body: text})
	}
	if _, err := m.Remember(ctx, entries, mira.RememberOptions{}); err != nil {
		b.Fatal(err)
	}
	if _, err := m.RebuildIndex(ctx); err != nil {
		b.Fatal(err)
	}
	return home
}
