package manifest

// applyCanonicalDefaults fills in every default before hashing and diffing,
// so that writing replicas = 1 and omitting it are the same.
func applyCanonicalDefaults(m *Manifest) {
	ApplyDefaults(m)
}
