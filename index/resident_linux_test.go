package index

import (
	"bufio"
	"fmt"
	"os"
	"strings"
	"testing"
	"unsafe"
)

// residentKB returns the resident size of the mapping that holds data,
// as /proc/self/smaps reports it.
func residentKB(t *testing.T, data []byte) int {
	t.Helper()
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Skipf("no smaps to read resident memory from: %v", err)
	}
	defer f.Close()
	addr := uintptr(unsafe.Pointer(unsafe.SliceData(data)))
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		var lo, hi uintptr
		if n, _ := fmt.Sscanf(line, "%x-%x ", &lo, &hi); n == 2 && strings.Contains(line, " ") {
			in = lo <= addr && addr < hi
			continue
		}
		var kb int
		if in && strings.HasPrefix(line, "Rss:") {
			fmt.Sscanf(strings.TrimPrefix(line, "Rss:"), "%d", &kb)
			return kb
		}
	}
	t.Fatalf("no mapping at %#x in /proc/self/smaps", addr)
	return 0
}
