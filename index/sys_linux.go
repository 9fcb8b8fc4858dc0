package index

import "golang.org/x/sys/unix"

// mapPopulate reads a mapping's pages in at once: one system call instead
// of a page fault per page.
const mapPopulate = unix.MAP_POPULATE

// dropPages lets go of the process's hold on the pages of the read-only
// file mapping data: they leave its resident memory but stay in the page
// cache, and a later read of one maps it again at the cost of a minor
// fault. data must stay mapped for the duration of the call.
func dropPages(data []byte) { unix.Madvise(data, unix.MADV_DONTNEED) }
