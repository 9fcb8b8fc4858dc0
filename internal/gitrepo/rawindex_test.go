package gitrepo

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
)

// rawChangeSets are changes to the files cliIndex makes (a.md, a.b, d/b.md,
// d/e/c.md, o/p.md and what each case adds): added, replaced and deleted
// files, a file where a directory was and the other way round.
var rawChangeSets = [][]*change{
	{rawAdd("n.md")},
	{rawAdd("a.md")},
	{rawDel("a.b"), rawAdd("zz/y.md")},
	{rawAdd("d"), rawAdd("a.md/x")},
	{rawDel("d/e/c.md"), rawDel("o/p.md"), rawAdd("0.md"), rawAdd("d/e/c.mdx")},
	{rawAdd("d/e"), rawAdd(longPath + "x")},
}

func rawAdd(p string) *change {
	h := plumbing.ComputeHash(plumbing.BlobObject, []byte(p))
	return &change{path: p, hash: h, entry: &indexEntry{name: p, hash: h, mode: 0o100644, size: uint32(len(p)), mtimeSec: 1_900_000_000}}
}

func rawDel(p string) *change { return &change{path: p, delete: true} }

// TestRawIndexMatchesDecoded: for every index git writes in the CLI cases
// and every change set, the bytes a rawIndex writes are the bytes of
// decoding, updateEntries and encode; indexes it does not take (version 4,
// split and sparse ones) are left to decodeIndex.
func TestRawIndexMatchesDecoded(t *testing.T) {
	t.Parallel()
	for _, tt := range cliIndexCases {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, data := cliIndex(t, tt.setup)
			_, ok := parseRawIndex(data)
			_, err := decodeIndex(data)
			if want := err == nil && tt.wantVersion != 4; ok != want {
				t.Fatalf("parseRawIndex took it: %v, want %v (version %d, decode error %v)", ok, want, tt.wantVersion, err)
			}
			if !ok {
				return
			}
			// Racily clean entries are smudged by both ways, or by none.
			for _, mtime := range []time.Time{time.Unix(0, 0), time.Now().Add(-time.Hour), time.Unix(1<<32, 0)} {
				for i, chs := range rawChangeSets {
					compareRaw(t, fmt.Sprintf("changes %d, index time %d", i, mtime.Unix()), data, chs, mtime)
				}
			}
		})
	}
}

func compareRaw(t *testing.T, what string, data []byte, chs []*change, mtime time.Time) {
	t.Helper()
	raw, ok := parseRawIndex(data)
	if !ok {
		t.Fatalf("%s: parseRawIndex refused it", what)
	}
	got, rerr := raw.update(chs, mtime)
	idx, err := decodeIndex(data)
	if err != nil {
		t.Fatalf("%s: decodeIndex: %v", what, err)
	}
	want, werr := encodeIndex(indexState{decoded: idx, mtime: mtime}, nil, chs)
	if (rerr != nil) != (werr != nil) {
		t.Fatalf("%s: raw error %v, decoded error %v", what, rerr, werr)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s: the raw index wrote other bytes than the decoded one:\nraw:     %x\ndecoded: %x", what, got, want)
	}
}

// FuzzRawIndex: whatever parseRawIndex takes, decodeIndex takes too, and
// an update gives the same bytes both ways.
func FuzzRawIndex(f *testing.F) {
	es := testEntries("a", "b/c", "b/d", "e")
	es[1].xflags = xflagIntentToAdd
	es[2].flags = flagAssumeValid
	es[3].mtimeSec = 1_900_000_000
	for _, v := range []uint32{2, 3} {
		data, err := (&indexFile{version: v, entries: es}).encode()
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data, uint8(0))
		f.Add(withExtension(data, "TREE", []byte("\x001 0\n")), uint8(1))
	}
	f.Fuzz(func(t *testing.T, data []byte, set uint8) {
		if len(data) < indexHashLen {
			return
		}
		data = seal(data)
		if _, ok := parseRawIndex(data); !ok {
			return
		}
		if _, err := decodeIndex(data); err != nil {
			t.Fatalf("parseRawIndex took an index decodeIndex refuses: %v", err)
		}
		chs := rawChangeSets[int(set)%len(rawChangeSets)]
		compareRaw(t, "fuzzed", data, chs, time.Unix(1_900_000_000, 0))
	})
}

// BenchmarkIndexRewrite is a commit's rewrite of .git/index at 10k
// entries, one file added: parsing and copying the bytes, beside decoding
// every entry, updating and encoding them.
func BenchmarkIndexRewrite(b *testing.B) {
	_, dir := benchStore(b, 10000)
	data, err := os.ReadFile(filepath.Join(dir, ".git", "index"))
	if err != nil {
		b.Fatal(err)
	}
	chs := []*change{rawAdd("entries/global/notes/zz-new.md")}
	mtime := time.Now().Add(-time.Hour)
	b.Run("raw", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			r, ok := parseRawIndex(data)
			if !ok {
				b.Fatal("not a raw index")
			}
			if _, err := r.update(chs, mtime); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("decoded", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			f, err := decodeIndex(data)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := encodeIndex(indexState{decoded: f, mtime: mtime}, nil, chs); err != nil {
				b.Fatal(err)
			}
		}
	})
}
