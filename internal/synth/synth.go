// Package synth makes the texts of generated memories for benchmarks:
// 15 to 54 words drawn from a small vocabulary of a developer's day, the
// same for the same count on every run.
package synth

import (
	"fmt"
	"math/rand/v2"
	"strings"
)

var words = strings.Fields("the a to of and in is for on that with we use build deploy database query cache index " +
	"server client request response error log config file version release branch merge commit review token auth " +
	"login session service cluster node container image postgres redis kafka queue worker job cron schedule timeout")

// Texts returns n generated texts; the i-th ends with "(i)", so that no
// two are the same.
func Texts(n int) []string {
	rng := rand.New(rand.NewPCG(1, 2))
	texts := make([]string, n)
	for i := range texts {
		w := make([]string, 15+rng.IntN(40))
		for j := range w {
			w[j] = words[rng.IntN(len(words))]
		}
		texts[i] = fmt.Sprintf("%s (%d)", strings.Join(w, " "), i)
	}
	return texts
}
