package static

import "embed"

// FS holds css/ and vendor/; paths are relative to this directory.
//
//go:embed css vendor
var FS embed.FS
