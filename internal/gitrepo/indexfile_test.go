package gitrepo

import (
	"bytes"
	"crypto/sha1"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/format/index"
	"github.com/google/go-cmp/cmp"
)

// entryRow is an index entry in a form both decoders can be compared in.
type entryRow struct {
	Name                      string
	Hash                      string
	Mode                      filemode.FileMode
	CtimeSec, CtimeNsec       uint32
	MtimeSec, MtimeNsec       uint32
	Dev, Ino, UID, GID        uint32
	Size                      uint32
	Stage                     int
	SkipWorktree, IntentToAdd bool
}

func ourRows(f *indexFile) []entryRow {
	rows := make([]entryRow, 0, len(f.entries))
	for _, e := range f.entries {
		rows = append(rows, entryRow{
			Name: e.name, Hash: e.hash.String(), Mode: e.mode,
			CtimeSec: e.ctimeSec, CtimeNsec: e.ctimeNsec, MtimeSec: e.mtimeSec, MtimeNsec: e.mtimeNsec,
			Dev: e.dev, Ino: e.ino, UID: e.uid, GID: e.gid, Size: e.size, Stage: e.stage(),
			SkipWorktree: e.xflags&xflagSkipWorktree != 0, IntentToAdd: e.xflags&xflagIntentToAdd != 0,
		})
	}
	return rows
}

func goGitRows(t testing.TB, data []byte) []entryRow {
	t.Helper()
	idx := &index.Index{}
	if err := index.NewDecoder(bytes.NewReader(data)).Decode(idx); err != nil {
		t.Fatalf("go-git decoder: %v", err)
	}
	// go-git reads zero stat times as the zero time.Time.
	sec := func(t time.Time) uint32 {
		if t.IsZero() {
			return 0
		}
		return uint32(t.Unix())
	}
	rows := make([]entryRow, 0, len(idx.Entries))
	for _, e := range idx.Entries {
		rows = append(rows, entryRow{
			Name: e.Name, Hash: e.Hash.String(), Mode: e.Mode,
			CtimeSec: sec(e.CreatedAt), CtimeNsec: uint32(e.CreatedAt.Nanosecond()),
			MtimeSec: sec(e.ModifiedAt), MtimeNsec: uint32(e.ModifiedAt.Nanosecond()),
			Dev: e.Dev, Ino: e.Inode, UID: e.UID, GID: e.GID, Size: e.Size, Stage: int(e.Stage),
			SkipWorktree: e.SkipWorktree, IntentToAdd: e.IntentToAdd,
		})
	}
	return rows
}

// cliIndexCases are indexes the git CLI writes, in the forms a store's
// repository can hold. Each setup is a list of git commands run in a fresh
// repository with a few files ({"=write", path, content} writes a file
// instead, and a command starting with "!" must fail).
var cliIndexCases = []struct {
	name        string
	setup       [][]string
	wantVersion uint32
	wantSkipped []string // optional extensions git wrote
	identical   bool     // no extensions: re-encoding must give git's bytes
}{
	{
		name:        "version 2",
		setup:       [][]string{{"add", "-A"}},
		wantVersion: 2,
		identical:   true,
	},
	{
		name:        "version 2 with cache tree",
		setup:       [][]string{{"add", "-A"}, {"commit", "--quiet", "-m", "m"}},
		wantVersion: 2,
		wantSkipped: []string{"TREE"},
	},
	{
		name:        "version 2 with entry offset extensions",
		setup:       [][]string{{"add", "-A"}, {"commit", "--quiet", "-m", "m"}, {"-c", "index.threads=2", "-c", "index.recordEndOfIndexEntries=true", "-c", "index.recordOffsetTable=true", "read-tree", "HEAD"}},
		wantVersion: 2,
		wantSkipped: []string{"IEOT", "TREE", "EOIE"},
	},
	{
		name: "version 3 flags",
		setup: [][]string{
			{"add", "-A"},
			{"=write", "new.md", "new\n"},
			{"add", "--intent-to-add", "new.md"},
			{"update-index", "--skip-worktree", "d/b.md"},
			{"update-index", "--assume-unchanged", "a.md"},
		},
		wantVersion: 3,
		identical:   true,
	},
	{
		name:        "version 4",
		setup:       [][]string{{"-c", "index.version=4", "add", "-A"}},
		wantVersion: 4,
		identical:   true,
	},
	{
		name: "version 4 flags with cache tree",
		setup: [][]string{
			{"add", "-A"}, {"commit", "--quiet", "-m", "m"},
			{"update-index", "--index-version", "4"},
			{"=write", "new.md", "new\n"},
			{"add", "--intent-to-add", "new.md"},
			{"update-index", "--skip-worktree", "d/e/c.md"},
		},
		wantVersion: 4,
		wantSkipped: []string{"TREE"},
	},
	{
		name: "long path",
		setup: [][]string{
			{"add", "-A"},
			{"update-index", "--add", "--cacheinfo", "100644,8baef1b4abc478178b004d62031cf7fe6db6f903," + longPath},
		},
		wantVersion: 2,
		identical:   true,
	},
	{
		name: "long path version 4",
		setup: [][]string{
			{"-c", "index.version=4", "add", "-A"},
			{"update-index", "--add", "--cacheinfo", "100644,8baef1b4abc478178b004d62031cf7fe6db6f903," + longPath},
			{"update-index", "--add", "--cacheinfo", "100644,8baef1b4abc478178b004d62031cf7fe6db6f903," + longPath + "2"},
		},
		wantVersion: 4,
		identical:   true,
	},
	{
		name: "conflict",
		setup: [][]string{
			{"add", "-A"}, {"commit", "--quiet", "-m", "base"},
			{"checkout", "--quiet", "-b", "side"},
			{"=write", "a.md", "side\n"}, {"rm", "--quiet", "d/b.md"}, {"commit", "--quiet", "-am", "side"},
			{"checkout", "--quiet", "main"},
			{"=write", "a.md", "main\n"}, {"=write", "d/b.md", "main\n"}, {"commit", "--quiet", "-am", "main"},
			{"!merge", "--quiet", "side"}, // fails with two conflicts
		},
		wantVersion: 2,
		wantSkipped: []string{"TREE"},
	},
}

// longPath is longer than the 12 bits of an entry's name length.
var longPath = strings.Repeat(strings.Repeat("x", 200)+"/", 25) + "f"

// cliIndex runs setup in a fresh repository and returns its directory and
// the index git wrote.
func cliIndex(t *testing.T, setup [][]string) (string, []byte) {
	t.Helper()
	dir := t.TempDir()
	runGit(t, dir, "init", "--quiet", "--initial-branch=main")
	writeFile(t, dir, "a.md", "a\n")
	writeFile(t, dir, "a.b", "a.b\n")
	writeFile(t, dir, "d/b.md", "b\n")
	writeFile(t, dir, "d/e/c.md", "c\n")
	writeFile(t, dir, "o/p.md", "p\n")
	for _, args := range setup {
		if args[0] == "=write" {
			writeFile(t, dir, args[1], args[2])
			continue
		}
		if strings.HasPrefix(args[0], "!") {
			if _, err := tryGit(t, dir, append([]string{args[0][1:]}, args[1:]...)...); err == nil {
				t.Fatalf("git %s succeeded, want a failure", strings.Join(args, " "))
			}
			continue
		}
		runGit(t, dir, args...)
	}
	data, err := os.ReadFile(filepath.Join(dir, ".git", "index"))
	if err != nil {
		t.Fatal(err)
	}
	return dir, data
}

// TestIndexCLIRoundTrip decodes indexes the git CLI wrote, compares the
// entries with go-git's decoder, re-encodes them, and checks that git reads
// the result as it read its own file.
func TestIndexCLIRoundTrip(t *testing.T) {
	t.Parallel()
	for _, tt := range cliIndexCases {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir, data := cliIndex(t, tt.setup)
			f, err := decodeIndex(data)
			if err != nil {
				t.Fatalf("decodeIndex: %v", err)
			}
			if f.version != tt.wantVersion {
				t.Errorf("version = %d, want %d", f.version, tt.wantVersion)
			}
			if diff := cmp.Diff(tt.wantSkipped, f.skipped); diff != "" {
				t.Errorf("skipped extensions (-want +got):\n%s", diff)
			}
			rows := ourRows(f)
			if diff := cmp.Diff(goGitRows(t, data), rows); diff != "" {
				t.Errorf("entries (-go-git +ours):\n%s", diff)
			}

			enc, err := f.encode()
			if err != nil {
				t.Fatalf("encode: %v", err)
			}
			if tt.identical && !bytes.Equal(enc, data) {
				t.Errorf("re-encoded index differs from git's:\ngit:  %x\nours: %x", data, enc)
			}
			again, err := decodeIndex(enc)
			if err != nil {
				t.Fatalf("decodeIndex(encode()): %v", err)
			}
			if again.version != tt.wantVersion {
				t.Errorf("re-encoded version = %d, want %d", again.version, tt.wantVersion)
			}
			if diff := cmp.Diff(rows, ourRows(again)); diff != "" {
				t.Errorf("entries after a round trip (-before +after):\n%s", diff)
			}
			if diff := cmp.Diff(rows, goGitRows(t, enc)); diff != "" {
				t.Errorf("entries of the re-encoded index read by go-git (-want +go-git):\n%s", diff)
			}

			// git must see exactly what it saw in its own file, flags
			// (assume-valid, skip-worktree) included.
			listing := func() string {
				return runGit(t, dir, "ls-files", "--stage", "--debug") + runGit(t, dir, "ls-files", "-v")
			}
			want := listing()
			if err := os.WriteFile(filepath.Join(dir, ".git", "index"), enc, 0o644); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, listing()); diff != "" {
				t.Errorf("git ls-files (-git's index +ours):\n%s", diff)
			}
		})
	}
}

// TestCommitKeepsIndexFlags checks that a commit keeps the flags and the
// version of the entries it does not touch, so sparse checkouts, intents
// to add and assume-unchanged files survive it.
func TestCommitKeepsIndexFlags(t *testing.T) {
	t.Parallel()
	for _, version := range []string{"2", "4"} {
		t.Run("version "+version, func(t *testing.T) {
			t.Parallel()
			dir, _ := cliIndex(t, [][]string{
				{"add", "-A"},
				{"update-index", "--index-version", version},
				{"commit", "--quiet", "-m", "m"},
				{"update-index", "--skip-worktree", "d/b.md"},
				{"update-index", "--assume-unchanged", "a.md"},
			})
			writeFile(t, dir, "later.md", "later\n")
			runGit(t, dir, "add", "--intent-to-add", "later.md")
			flags := runGit(t, dir, "ls-files", "-v")
			status := runGit(t, dir, "status", "--porcelain")

			r, err := Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			writeFile(t, dir, "d/e/c.md", "c2\n")
			if _, err := r.Commit([]Change{{Path: "d/e/c.md"}}, "m", testSig); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(flags, runGit(t, dir, "ls-files", "-v")); diff != "" {
				t.Errorf("git ls-files -v (-before +after):\n%s", diff)
			}
			if diff := cmp.Diff(status, runGit(t, dir, "status", "--porcelain")); diff != "" {
				t.Errorf("git status (-before +after):\n%s", diff)
			}
			data, err := os.ReadFile(filepath.Join(dir, ".git", "index"))
			if err != nil {
				t.Fatal(err)
			}
			wantVersion := uint32(3) // extended flags need version 3
			if version == "4" {
				wantVersion = 4
			}
			if got := binary.BigEndian.Uint32(data[4:]); got != wantVersion {
				t.Errorf("index version after the commit = %d, want %d", got, wantVersion)
			}
		})
	}
}

// TestCommitOverSparseIndex checks that a sparse index, which holds whole
// directories as entries, is recognised and replaced by a full index rather
// than misread. The replacement marks nothing skip-worktree, so git lists
// the files outside the sparse cone as deleted until `git sparse-checkout
// reapply` marks them again.
func TestCommitOverSparseIndex(t *testing.T) {
	t.Parallel()
	dir, _ := cliIndex(t, [][]string{
		{"add", "-A"}, {"commit", "--quiet", "-m", "m"},
		{"sparse-checkout", "set", "--cone", "--sparse-index", "d"}, // leaves out o/
	})
	st, err := readIndex(filepath.Join(dir, ".git", "index"))
	if err != nil {
		t.Fatal(err)
	}
	if !errors.Is(st.err, errSparseIndex) || st.usable() {
		t.Fatalf("reading a sparse index: error %v, want %v", st.err, errSparseIndex)
	}
	r, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, dir, "d/e/c.md", "c2\n")
	if _, err := r.Commit([]Change{{Path: "d/e/c.md"}}, "m", testSig); err != nil {
		t.Fatal(err)
	}
	if out := runGit(t, dir, "ls-files", "--stage", "d/e/c.md"); !strings.Contains(out, "d/e/c.md") {
		t.Errorf("git ls-files after the commit = %q, want d/e/c.md in it", out)
	}
	runGit(t, dir, "sparse-checkout", "reapply")
	assertClean(t, dir)
}

// testEntries returns sorted entries with distinct stat data.
func testEntries(names ...string) []indexEntry {
	es := make([]indexEntry, len(names))
	for i, name := range names {
		n := uint32(i + 1)
		es[i] = indexEntry{
			ctimeSec: 1_700_000_000 + n, ctimeNsec: n, mtimeSec: 1_700_000_100 + n, mtimeNsec: 2 * n,
			dev: 64768, ino: 1000 + n, mode: filemode.Regular, uid: 1000, gid: 100, size: 10 * n,
			hash: plumbing.ComputeHash(plumbing.BlobObject, []byte(name)), name: name,
		}
	}
	return es
}

// seal replaces the trailing checksum of an index with the right one.
func seal(data []byte) []byte {
	out := bytes.Clone(data)
	body := out[:len(out)-indexHashLen]
	sum := sha1.Sum(body)
	copy(out[len(body):], sum[:])
	return out
}

func mustEncode(t testing.TB, f *indexFile) []byte {
	t.Helper()
	data, err := f.encode()
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// withExtension appends an extension to an encoded index and seals it.
func withExtension(data []byte, sig string, payload []byte) []byte {
	body := bytes.Clone(data[:len(data)-indexHashLen])
	body = append(body, sig...)
	body = binary.BigEndian.AppendUint32(body, uint32(len(payload)))
	body = append(body, payload...)
	return seal(append(body, make([]byte, indexHashLen)...))
}

// TestDecodeIndexErrors damages a valid index in the ways a torn write,
// another tool or a newer git could, and checks the error: each must be
// refused (and so rebuilt), never misread.
func TestDecodeIndexErrors(t *testing.T) {
	v2 := mustEncode(t, &indexFile{version: 2, entries: testEntries("a", "b/c", "d")})
	v3 := func() []byte {
		es := testEntries("a", "b")
		es[1].xflags = xflagSkipWorktree
		return mustEncode(t, &indexFile{version: 3, entries: es})
	}()
	v4 := mustEncode(t, &indexFile{version: 4, entries: testEntries("dir/a", "dir/b")})
	const first = indexHeaderLen // offset of the first entry
	edit := func(data []byte, fn func(b []byte) []byte) []byte { return seal(fn(bytes.Clone(data))) }
	put16 := func(off int, v uint16) func([]byte) []byte {
		return func(b []byte) []byte { binary.BigEndian.PutUint16(b[off:], v); return b }
	}
	put32 := func(off int, v uint32) func([]byte) []byte {
		return func(b []byte) []byte { binary.BigEndian.PutUint32(b[off:], v); return b }
	}

	tests := []struct {
		name string
		data []byte
		want error // nil: must decode
	}{
		{"valid version 2", v2, nil},
		{"valid version 3", v3, nil},
		{"valid version 4", v4, nil},
		{"no checksum (index.skipHash)", append(bytes.Clone(v2[:len(v2)-indexHashLen]), make([]byte, indexHashLen)...), nil},
		{"optional extension", withExtension(v2, "ABCD", []byte("whatever")), nil},
		{"empty", nil, errIndexFormat},
		{"header only", v2[:indexHeaderLen], errIndexFormat},
		{"bad checksum", append(bytes.Clone(v2[:len(v2)-1]), v2[len(v2)-1]^1), errIndexChecksum},
		{"flipped bit", func() []byte { b := bytes.Clone(v2); b[first+70] ^= 1; return b }(), errIndexChecksum},
		{"truncated", v2[:len(v2)-30], errIndexChecksum},
		{"truncated and resealed", seal(append(bytes.Clone(v2[:len(v2)-50]), make([]byte, indexHashLen)...)), errIndexFormat},
		{"signature", edit(v2, func(b []byte) []byte { copy(b, "DIRX"); return b }), errIndexFormat},
		{"version 1", edit(v2, put32(4, 1)), errIndexFormat},
		{"version 5", edit(v2, put32(4, 5)), errIndexFormat},
		{"entry count too large", edit(v2, put32(8, 1<<30)), errIndexFormat},
		{"entry count too small", edit(v2, put32(8, 2)), errAny}, // the last entry reads as an extension
		{"entry count too large to read", edit(v2, put32(8, 4)), errIndexFormat},
		{"extended flags in version 2", edit(v2, put16(first+60, flagExtended|1)), errIndexFormat},
		{"unknown extended flags", edit(v3, func(b []byte) []byte {
			off := first + 64 // the second entry follows the first, padded to 64 bytes
			binary.BigEndian.PutUint16(b[off+62:], 1<<15)
			return b
		}), errIndexFormat},
		{"name length too short", edit(v2, put16(first+60, 0)), errIndexFormat},
		{"name length too long", edit(v2, put16(first+60, 3)), errIndexFormat},
		{"entries out of order", mustEncodeUnchecked(t, 2, testEntries("b", "a")), errIndexFormat},
		{"duplicate entries", mustEncodeUnchecked(t, 2, testEntries("a", "a")), errIndexFormat},
		{"stray bytes", seal(append(bytes.Clone(v2[:len(v2)-indexHashLen]), 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)), errIndexFormat},
		{"split index", withExtension(v2, "link", make([]byte, 20)), errSplitIndex},
		{"sparse index", withExtension(v2, "sdir", nil), errSparseIndex},
		{"mandatory extension", withExtension(v2, "abcd", nil), errIndexExtension},
		{"extension overruns", edit(withExtension(v2, "ABCD", []byte("x")), func(b []byte) []byte {
			binary.BigEndian.PutUint32(b[len(b)-indexHashLen-5:], 2)
			return b
		}), errIndexFormat},
		{"version 4 strips too much", edit(v4, func(b []byte) []byte { b[first+62] = 1; return b }), errIndexFormat},
		{"version 4 path not terminated", seal(append(bytes.Clone(v4[:len(v4)-indexHashLen-1]), 'x', 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)), errIndexFormat},
		{"version 4 strip count unterminated", edit(v4, func(b []byte) []byte { b[first+62] = 0x80; return b }), errIndexFormat},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := decodeIndex(tt.data)
			if tt.want == nil {
				if err != nil {
					t.Fatalf("decodeIndex: %v", err)
				}
				return
			}
			if err == nil || tt.want != errAny && !errors.Is(err, tt.want) {
				t.Errorf("decodeIndex error = %v, want %v", err, tt.want)
			}
			if f != nil {
				t.Errorf("decodeIndex returned entries with the error %v", err)
			}
		})
	}
}

// errAny stands for any error in TestDecodeIndexErrors.
var errAny = errors.New("any error")

// mustEncodeUnchecked encodes entries whatever their order, as another tool
// with a bug could.
func mustEncodeUnchecked(t testing.TB, version uint32, es []indexEntry) []byte {
	t.Helper()
	good := make([]indexEntry, len(es))
	copy(good, es)
	for i := range good {
		good[i].name = fmt.Sprintf("%c", 'a'+i)
	}
	data := mustEncode(t, &indexFile{version: version, entries: good})
	// The names are one byte each, so swapping them in place keeps the
	// layout of the entries.
	for i := range es {
		data[indexHeaderLen+i*64+entryStatLen] = es[i].name[0]
	}
	return seal(data)
}

// TestDecodeIndexGarbage checks that random bytes, with or without a
// valid header and checksum, are refused.
func TestDecodeIndexGarbage(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 2000 {
		data := make([]byte, rng.IntN(600))
		for j := range data {
			data[j] = byte(rng.Uint32())
		}
		if _, err := decodeIndex(data); err == nil {
			t.Fatalf("random data %x decoded", data)
		}
		if len(data) < indexHeaderLen+indexHashLen {
			continue
		}
		copy(data, indexSignature)
		binary.BigEndian.PutUint32(data[4:], uint32(2+i%3))
		binary.BigEndian.PutUint32(data[8:], uint32(1+rng.IntN(4)))
		if _, err := decodeIndex(seal(data)); err == nil {
			t.Errorf("random entries %x decoded", data)
		}
	}
}

func TestIndexVarint(t *testing.T) {
	tests := []struct {
		v    uint64
		want []byte
	}{
		{0, []byte{0x00}},
		{1, []byte{0x01}},
		{127, []byte{0x7f}},
		{128, []byte{0x80, 0x00}},
		{255, []byte{0x80, 0x7f}},
		{16511, []byte{0xff, 0x7f}},
		{16512, []byte{0x80, 0x80, 0x00}},
		{1 << 40, nil},
	}
	for _, tt := range tests {
		got := appendVarint(nil, tt.v)
		if tt.want != nil && !bytes.Equal(got, tt.want) {
			t.Errorf("appendVarint(%d) = %x, want %x", tt.v, got, tt.want)
		}
		v, n := readVarint(append(got, 0xaa))
		if v != tt.v || n != len(got) {
			t.Errorf("readVarint(%x) = %d, %d, want %d, %d", got, v, n, tt.v, len(got))
		}
	}
	for _, bad := range [][]byte{nil, {0x80}, {0xff, 0xff}, bytes.Repeat([]byte{0xff}, 12)} {
		if v, n := readVarint(bad); n != 0 {
			t.Errorf("readVarint(%x) = %d, %d, want an error", bad, v, n)
		}
	}
}

// TestIndexEncodeRefusesDisorder checks the encoder's guard against writing
// an index git would refuse to read.
func TestIndexEncodeRefusesDisorder(t *testing.T) {
	for _, names := range [][]string{{"b", "a"}, {"a", "a"}, {"a", ""}, {"a\x00b"}} {
		if _, err := (&indexFile{entries: testEntries(names...)}).encode(); err == nil {
			t.Errorf("encode of entries %q succeeded", names)
		}
	}
	es := testEntries("a", "a")
	es[0].flags, es[1].flags = 1<<12, 2<<12 // two sides of a conflict
	if _, err := (&indexFile{entries: es}).encode(); err != nil {
		t.Errorf("encode of stages 1 and 2 of one path: %v", err)
	}
}

// FuzzDecodeIndex checks that the decoder never panics, and that whatever it
// accepts survives a round trip through the encoder unchanged. The checksum
// is repaired before the second attempt so that the fuzzer reaches the
// parser instead of stopping at the checksum.
func FuzzDecodeIndex(f *testing.F) {
	es := testEntries("a", "b/c", "b/d", "e")
	es[1].xflags = xflagIntentToAdd
	es[2].flags = flagAssumeValid
	for _, v := range []uint32{2, 3, 4} {
		data, err := (&indexFile{version: v, entries: es}).encode()
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
		f.Add(withExtension(data, "TREE", []byte("\x001 0\n")))
	}
	f.Add([]byte(indexSignature))
	f.Fuzz(func(t *testing.T, data []byte) {
		if _, err := decodeIndex(data); err == nil && len(data) >= indexHashLen && !isZero(data[len(data)-indexHashLen:]) {
			// Only a right checksum lets bytes through; a fuzzer does
			// not find SHA-1 collisions.
			if sum := sha1.Sum(data[:len(data)-indexHashLen]); !bytes.Equal(sum[:], data[len(data)-indexHashLen:]) {
				t.Fatal("decoded despite a wrong checksum")
			}
		}
		if len(data) < indexHashLen {
			return
		}
		idx, err := decodeIndex(seal(data))
		if err != nil {
			return
		}
		enc, err := idx.encode()
		if err != nil {
			t.Fatalf("encode of a decoded index: %v", err)
		}
		again, err := decodeIndex(enc)
		if err != nil {
			t.Fatalf("decode of a re-encoded index: %v", err)
		}
		if diff := cmp.Diff(ourRows(idx), ourRows(again)); diff != "" {
			t.Fatalf("entries after a round trip (-before +after):\n%s", diff)
		}
		for i := range idx.entries {
			if idx.entries[i].flags != again.entries[i].flags {
				t.Fatalf("entry %q flags %#x became %#x", idx.entries[i].name, idx.entries[i].flags, again.entries[i].flags)
			}
		}
	})
}

// BenchmarkIndexCodec measures reading and writing .git/index of a store of
// ten thousand files, with this package's codec and with go-git's.
func BenchmarkIndexCodec(b *testing.B) {
	_, dir := benchStore(b, 10000)
	data, err := os.ReadFile(filepath.Join(dir, ".git", "index"))
	if err != nil {
		b.Fatal(err)
	}
	b.Run("decode", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			if _, err := decodeIndex(data); err != nil {
				b.Fatal(err)
			}
		}
	})
	f, err := decodeIndex(data)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("encode", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			if _, err := f.encode(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("decode-go-git", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			if err := index.NewDecoder(bytes.NewReader(data)).Decode(&index.Index{}); err != nil {
				b.Fatal(err)
			}
		}
	})
	idx := &index.Index{}
	if err := index.NewDecoder(bytes.NewReader(data)).Decode(idx); err != nil {
		b.Fatal(err)
	}
	idx.Cache = nil
	b.Run("encode-go-git", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			var buf bytes.Buffer
			if err := index.NewEncoder(&buf).Encode(idx); err != nil {
				b.Fatal(err)
			}
		}
	})
}
