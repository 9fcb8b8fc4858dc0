package index

import "golang.org/x/sys/unix"

// mapPopulate reads a mapping's pages in at once: one system call instead
// of a page fault per page.
const mapPopulate = unix.MAP_POPULATE
