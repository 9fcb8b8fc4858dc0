package mira

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/miramem/mira/index"
	"github.com/miramem/mira/internal/synth"
	"github.com/miramem/mira/mem"
)

// benchStore makes a store of n generated memories (one commit) with its
// index built, and returns its home.
func benchStore(b *testing.B, n int) string {
	b.Helper()
	home := filepath.Join(b.TempDir(), "home")
	m, err := Open(context.Background(), Options{Home: home, Config: &Config{}, Getenv: func(string) string { return "" }})
	if err != nil {
		b.Fatal(err)
	}
	defer m.Close()
	var entries []*mem.Entry
	for _, text := range synth.Texts(n) {
		entries = append(entries, &mem.Entry{Kind: mem.KindNote, Body: text})
	}
	if _, err := m.Remember(context.Background(), entries, RememberOptions{}); err != nil {
		b.Fatal(err)
	}
	if _, err := m.RebuildIndex(context.Background()); err != nil {
		b.Fatal(err)
	}
	return home
}

func benchOpen(b *testing.B, home string, opt Options) *Memory {
	b.Helper()
	opt.Home, opt.Config, opt.Getenv, opt.Existing = home, &Config{}, func(string) string { return "" }, true
	m, err := Open(context.Background(), opt)
	if err != nil {
		b.Fatal(err)
	}
	return m
}

// BenchmarkRecallServed is a recall as the server answers it: a Memory
// opened per request over the kept index and records, with the server's
// watcher standing for the freshness check (index.ReaderOptions.Fresh).
func BenchmarkRecallServed(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			home := benchStore(b, n)
			keep, records := new(index.Keep), &RecordCache{}
			defer keep.Release()
			fresh := func() error { return nil }
			for b.Loop() {
				m := benchOpen(b, home, Options{Index: index.ReaderOptions{Keep: keep, Fresh: fresh}, Records: records})
				if _, err := m.Recall(context.Background(), Query{Text: "postgres cache timeout", K: 10}); err != nil {
					b.Fatal(err)
				}
				m.Close()
			}
		})
	}
}

// BenchmarkRecallCold is a recall in a process of its own: open, check
// the store for changes (the stat pass), search, read the hits.
func BenchmarkRecallCold(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			home := benchStore(b, n)
			for b.Loop() {
				m := benchOpen(b, home, Options{})
				if _, err := m.Recall(context.Background(), Query{Text: "postgres cache timeout", K: 10}); err != nil {
					b.Fatal(err)
				}
				m.Close()
			}
		})
	}
}

// BenchmarkRememberOne stores one memory in a store of n: the duplicate
// check, the entry, the blob, the trees on its path and the commit.
func BenchmarkRememberOne(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			home := benchStore(b, n)
			i := 0
			for b.Loop() {
				i++
				m := benchOpen(b, home, Options{})
				e := &mem.Entry{Kind: mem.KindNote, Body: fmt.Sprintf("benchmark memory number %d", i)}
				if _, err := m.Remember(context.Background(), []*mem.Entry{e}, RememberOptions{}); err != nil {
					b.Fatal(err)
				}
				m.Close()
			}
		})
	}
}
