package rank

import "testing"

// FuzzUnmarshal feeds damaged models to the decoder: it must give an
// error or a model that answers and takes changes, never panic.
func FuzzUnmarshal(f *testing.F) {
	b, err := build(tiny()).MarshalBinary()
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	f.Add([]byte(magic))
	f.Fuzz(func(t *testing.T, data []byte) {
		m := New()
		if m.UnmarshalBinary(data) != nil {
			return
		}
		snapshot(m)
		m.Remove("command.go")
		m.put(tiny()[0])
		snapshot(m)
		if _, err := m.MarshalBinary(); err != nil {
			t.Fatal(err)
		}
	})
}

// FuzzQuery runs arbitrary queries against a small model.
func FuzzQuery(f *testing.F) {
	m := build(tiny())
	for _, q := range []string{"persistent flags", "Command.Execute", "::", ".", "a.b.c", "\xff\xfe", ""} {
		f.Add(q)
	}
	f.Fuzz(func(t *testing.T, q string) {
		m.Files(Query{Text: q, Explain: true, Near: map[string]float64{"util.go": 2}})
		m.Symbols(Query{Text: q, Explain: true})
	})
}
