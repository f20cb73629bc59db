package static

import "embed"

// FS holds css/, js/ and vendor/; paths are relative to this directory.
//
//go:embed css js vendor
var FS embed.FS
