package manifest

// Internals for the external tests.
var (
	DecodeTOMLReflect = decodeTOMLReflect
	DecodeTOMLFast    = decodeTOMLFast
)
