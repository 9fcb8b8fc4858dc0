// Package cputime measures the CPU time a process has used: what the code
// index reports for each phase of a build, and what benchmarks report
// beside wall time, a steadier measure on a machine shared with other work.
package cputime
