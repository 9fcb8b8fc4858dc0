package relay

import (
	"bytes"
	"testing"
)

// FuzzReadFrame: any bytes from a confused peer are frames or an error,
// never a panic or a huge allocation.
func FuzzReadFrame(f *testing.F) {
	var b bytes.Buffer
	WriteFrame(&b, Stdout, []byte("hello"))
	WriteFrame(&b, Exit, []byte("0"))
	f.Add(b.Bytes())
	f.Add([]byte{'o', 0xff, 0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, data []byte) {
		r := bytes.NewReader(data)
		for range 8 {
			if _, p, err := ReadFrame(r); err != nil {
				return
			} else if len(p) > maxFrame {
				t.Fatalf("frame of %d bytes", len(p))
			}
		}
	})
}

// FuzzConfigHome: the client's reading of home: in any configuration.
func FuzzConfigHome(f *testing.F) {
	for _, s := range []string{"home: /x\n", "home: '/a b' # c\n", "home: \"x\\\"y\"\n", "recall:\n  home: no\n", "home:x\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		configHome(data)
	})
}
