package app

import "strings"

// shortImageLength is how many hex digits of an image ID or digest the
// overview shows, as docker does.
const shortImageLength = 12

// shortImage shortens what Swarm runs for the services table: a pinned
// reference (name@sha256:…) to its digest, an image ID (sha256:…) to its
// short ID; other references are shown as they are.
func shortImage(ref string) string {
	if _, digest, ok := strings.Cut(ref, "@"); ok {
		ref = digest
	}
	if hex, ok := strings.CutPrefix(ref, "sha256:"); ok {
		return "sha256:" + hex[:min(len(hex), shortImageLength)]
	}
	return ref
}
