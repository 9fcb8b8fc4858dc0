package index

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/miramem/mira/internal/atomicfile"
)

// The stat summary (statsum in a generation) lets a refresh that finds
// nothing changed skip reading the manifest: at a million entries the
// manifest is 140 MB of text, and parsing it and looking every file up in
// it cost more than the stat pass itself. A full stat pass that matched
// the manifest exactly (no file to load or drop, nothing racy on disk or
// in the manifest, the indexed commit the head) records a digest of what
// it saw, a sum over the files of a 128-bit hash of each file's path, size
// and modification time, with the state of the meta and the manifest it
// was compared with. The next pass whose digest is the same, and which
// finds the meta and the manifest as they were, has nothing to do either:
// every file has the size and time the manifest holds, and no file came
// or went. Any update changes the meta, and so voids the summary; a
// summary that is torn or damaged fails its CRC and is ignored.
const statSumName = "statsum"

// statSum is the content of a stat summary.
type statSum struct {
	Commit  string `json:"commit"`
	Updated int64  `json:"updated"` // meta.UpdatedAt, unix ns
	Built   int64  `json:"built"`   // meta.BuiltAt, unix ns
	Docs    int    `json:"docs"`
	VecSeq  int    `json:"vec_seq"`
	VecLog  int64  `json:"vec_log"`
	ManSize int64  `json:"man_size"` // the manifest's size and time
	ManTime int64  `json:"man_time"`
	ManLog  int64  `json:"man_log"` // the size of its log, 0 for none
	Files   int    `json:"files"`
	Lo      uint64 `json:"lo,string"` // the digest
	Hi      uint64 `json:"hi,string"`
}

// statDigest is the digest of a full stat pass's entry files, and false
// when one of them is racy (modified within RacyWindow of the pass).
func statDigest(pr probe) (n int, lo, hi uint64, ok bool) {
	racy := pr.statAt - int64(RacyWindow)
	var b []byte
	for _, st := range pr.stats {
		if !IsEntryPath(st.Path) {
			continue
		}
		if st.ModTime > racy {
			return 0, 0, 0, false
		}
		b = append(b[:0], st.Path...)
		b = binary.LittleEndian.AppendUint64(b, uint64(st.Size))
		b = binary.LittleEndian.AppendUint64(b, uint64(st.ModTime))
		h1, h2 := hash128(b)
		lo += h1
		hi += h2
		n++
	}
	return n, lo, hi, true
}

// hash128 is a 128-bit hash of b (two FNV-1a 64 lanes of different seeds,
// each finished by a mixer so that sums of them do not cancel).
func hash128(b []byte) (uint64, uint64) {
	const prime = 1099511628211
	h1, h2 := uint64(14695981039346656037), uint64(0x9e3779b97f4a7c15)
	for _, c := range b {
		h1 = (h1 ^ uint64(c)) * prime
		h2 = (h2 ^ uint64(c)) * prime
	}
	return mix64(h1), mix64(h2 ^ uint64(len(b)))
}

func mix64(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}

// manifestStat is the state of a generation's manifest as a stat summary
// holds it.
func manifestStat(genDir string) (size, mtime, logSize int64, err error) {
	fi, logSize, err := manifestState(filepath.Join(genDir, manifestName))
	if err != nil {
		return 0, 0, 0, err
	}
	return fi.Size(), fi.ModTime().UnixNano(), logSize, nil
}

// newStatSum is the summary of a pass that matched the manifest.
func newStatSum(genDir string, m meta, pr probe) (statSum, bool) {
	n, lo, hi, ok := statDigest(pr)
	if !ok {
		return statSum{}, false
	}
	size, mtime, logSize, err := manifestStat(genDir)
	if err != nil {
		return statSum{}, false
	}
	return statSum{Commit: m.Commit, Updated: m.UpdatedAt.UnixNano(), Built: m.BuiltAt.UnixNano(), Docs: m.Docs,
		VecSeq: m.VecSeq, VecLog: m.VecLog, ManSize: size, ManTime: mtime, ManLog: logSize,
		Files: n, Lo: lo, Hi: hi}, true
}

// writeStatSum records s; errors are dropped, as a missing summary costs
// only the manifest's reading.
func writeStatSum(genDir string, s statSum) {
	b, err := json.Marshal(s)
	if err != nil {
		return
	}
	line := fmt.Sprintf("%s %08x\n", b, crc32.Checksum(b, castagnoli))
	atomicfile.Write(filepath.Join(genDir, statSumName), []byte(line), 0o600, false)
}

// readStatSum returns the summary of the generation if it is whole and
// made against the meta m and the manifest as they are now.
func readStatSum(genDir string, m meta) (statSum, bool) {
	b, err := os.ReadFile(filepath.Join(genDir, statSumName))
	if err != nil {
		return statSum{}, false
	}
	body, ok := strings.CutSuffix(string(b), "\n")
	i := strings.LastIndexByte(body, ' ')
	if !ok || i < 0 {
		return statSum{}, false
	}
	sum, err := strconv.ParseUint(body[i+1:], 16, 32)
	if err != nil || uint32(sum) != crc32.Checksum([]byte(body[:i]), castagnoli) {
		return statSum{}, false
	}
	var s statSum
	if json.Unmarshal([]byte(body[:i]), &s) != nil {
		return statSum{}, false
	}
	size, mtime, logSize, err := manifestStat(genDir)
	if err != nil || s.Commit != m.Commit || s.Updated != m.UpdatedAt.UnixNano() || s.Built != m.BuiltAt.UnixNano() ||
		s.Docs != m.Docs || s.VecSeq != m.VecSeq || s.VecLog != m.VecLog ||
		s.ManSize != size || s.ManTime != mtime || s.ManLog != logSize {
		return statSum{}, false
	}
	return s, true
}

// sameFiles reports whether the pass pr saw what the summary s did.
func (s statSum) sameFiles(pr probe) bool {
	n, lo, hi, ok := statDigest(pr)
	return ok && n == s.Files && lo == s.Lo && hi == s.Hi
}
