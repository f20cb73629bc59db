package manifest

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// Preview slug limits: a prefix and the slug still fit one 63-byte DNS label.
const (
	maxPreviewSlug     = 40
	previewSlugHashLen = 6
)

// PreviewSlug derives a preview's DNS-safe slug from
// <application>-<branch>[-<slot>]: lowercase letters and digits, every other
// run of characters as one hyphen, truncated, then a hyphen and a short hash
// of the exact application, branch and slot (notes-feat-login-3fa2c1). It is
// env.slug and env.name of the preview. Callers store it once; it is not
// recomputed when the application is renamed.
func PreviewSlug(app, branch, slot string) string {
	src := app + "-" + branch
	if slot != "" {
		src += "-" + slot
	}
	var b strings.Builder
	hyphen := false
	for _, r := range strings.ToLower(src) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
			hyphen = false
			continue
		}
		if !hyphen && b.Len() > 0 {
			b.WriteByte('-')
			hyphen = true
		}
	}
	base := b.String()
	if limit := maxPreviewSlug - previewSlugHashLen - 1; len(base) > limit {
		base = base[:limit]
	}
	base = strings.Trim(base, "-")
	// NUL separates the parts so that ("a-b", "c") and ("a", "b-c") differ.
	sum := sha256.Sum256([]byte(app + "\x00" + branch + "\x00" + slot))
	hash := hex.EncodeToString(sum[:])[:previewSlugHashLen]
	if base == "" || base[0] < 'a' || base[0] > 'z' {
		// Names start with a letter.
		base = "p" + strings.TrimPrefix(base, "-")
		if len(base) > maxPreviewSlug-previewSlugHashLen-1 {
			base = strings.TrimRight(base[:maxPreviewSlug-previewSlugHashLen-1], "-")
		}
	}
	return base + "-" + hash
}
