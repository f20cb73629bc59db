// Package build benchmarks runtime/build's checkouts against the git CLI.
//
// The benchmark creates a repository with 2,000 files and about 50 MB of
// history and times a runtime/build checkout of its head (file:// read in
// place, HTTP shallow fetch) against `git clone --depth 1` of the same
// commit, printing both and the ratio (target: at most 1.5x). The git CLI
// is used here only, as the yardstick; product code never runs it.
// `go test` runs a small variant; `go test -bench .` the full one.
package build
