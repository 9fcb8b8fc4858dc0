// Command tokcount counts the tokens of the text of each JSONL record on
// stdin, once, and prints the total: the baseline `make bench` sets beside
// mira-context, which must count the same texts and plan them too. Like
// mira-context it counts on every core.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"runtime"
	"sync"
	"sync/atomic"

	plan "github.com/miramem/mira/ctx"
)

func main() {
	enc := "o200k_base"
	if len(os.Args) > 1 {
		enc = os.Args[1]
	}
	tok, err := plan.NewTokenizer(enc)
	if err != nil {
		fmt.Fprintln(os.Stderr, "tokcount:", err)
		os.Exit(2)
	}
	sc := bufio.NewScanner(os.Stdin)
	sc.Buffer(make([]byte, 0, 1<<20), 64<<20)
	var texts []string
	for sc.Scan() {
		var r struct {
			Text string `json:"text"`
		}
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			fmt.Fprintln(os.Stderr, "tokcount:", err)
			os.Exit(2)
		}
		texts = append(texts, r.Text)
	}
	if err := sc.Err(); err != nil {
		fmt.Fprintln(os.Stderr, "tokcount:", err)
		os.Exit(1)
	}
	if err := tok.Load(); err != nil {
		fmt.Fprintln(os.Stderr, "tokcount:", err)
		os.Exit(1)
	}
	var total atomic.Int64
	var next atomic.Int64
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= len(texts) {
					return
				}
				total.Add(int64(tok.Count(texts[i])))
			}
		})
	}
	wg.Wait()
	fmt.Println(total.Load())
}
