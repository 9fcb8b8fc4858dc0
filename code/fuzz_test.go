package code

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzDecodePayload feeds damaged index payloads to the decoder, as if
// the checksum had missed the damage: the file heads decode or give an
// error, and every body decoded afterwards either decodes or is reported
// as damage, never a panic; a payload that decodes saves again.
func FuzzDecodePayload(f *testing.F) {
	root := project(f)
	dir := f.TempDir()
	ix := open(f, root, dir, nil)
	update(f, ix)
	b, err := os.ReadFile(filepath.Join(dir, indexName))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b[headerSize : len(b)-checksumSize])
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, payload []byte) {
		st, err := decodePayload(payload)
		if err != nil {
			return
		}
		for _, fr := range st.Files {
			if pf := fr.file(); pf != nil {
				for _, s := range pf.Symbols {
					_ = s.Name
				}
			}
			refs := fr.refs()
			names := st.names.all()
			for i := range len(refs) / 3 {
				unpackRef(names, refs, i)
			}
			fr.counts()
		}
		st.bodies.damage()
		if _, err := encodePayload(st); err != nil {
			t.Fatalf("a decoded payload does not encode: %v", err)
		}
	})
}
