// Command tokcount counts the tokens of the text of each JSONL record on
// stdin, once, and prints the total: the baseline `make bench` sets beside
// mira-context, which must count the same texts and plan them too.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"

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
	total := 0
	for sc.Scan() {
		var r struct {
			Text string `json:"text"`
		}
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			fmt.Fprintln(os.Stderr, "tokcount:", err)
			os.Exit(2)
		}
		total += tok.Count(r.Text)
	}
	if err := sc.Err(); err != nil {
		fmt.Fprintln(os.Stderr, "tokcount:", err)
		os.Exit(1)
	}
	fmt.Println(total)
}
