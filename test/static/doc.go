// Package static holds tests that read the module's source instead of
// running it: guarantees that must hold for every file, present and future,
// such as "no code path builds a shell command".
package static
