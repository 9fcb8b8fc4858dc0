//go:build unix && !linux

package index

const mapPopulate = 0

// dropPages does nothing here: the mapping's pages stay resident.
func dropPages([]byte) {}
