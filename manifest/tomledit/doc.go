// Package tomledit changes a TOML document in place: given the data it
// decodes to now and the data it should decode to, it rewrites only the
// keys, tables and array-table elements that differ, keeping every other
// byte (comments, blank lines, key order, quoting) as the author wrote it.
// The dashboard's field edits use it so a TOML manifest stays TOML, with its
// comments, after one variable changes.
//
// It works on the syntax tree of go-toml's parser and on JSON-shaped data
// (objects, arrays, strings, numbers, booleans). It is pure: it must not
// import anything of this module outside manifest/, nor do I/O.
package tomledit
