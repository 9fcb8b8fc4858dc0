//go:build unix && !linux

package index

const mapPopulate = 0
