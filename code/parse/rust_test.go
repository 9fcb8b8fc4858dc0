package parse

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Items with a restricted visibility are items, whatever the path in pub(…).
func TestRustRestrictedPub(t *testing.T) {
	src := []byte("pub(super) mod fish;\npub(in crate::a) fn g() {}\npub(self) struct S;\npub(crate) const C: u8 = 1;\n")
	f, err := Parse("src/lib.rs", src)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range f.Symbols {
		got = append(got, string(s.Kind)+" "+s.Name+" "+s.Signature)
	}
	want := []string{
		"module fish pub(super) mod fish",
		"func g pub(in crate::a) fn g()",
		"struct S pub(self) struct S",
		"const C pub(crate) const C: u8 = 1",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("symbols diff (-want +got):\n%s", diff)
	}
}
