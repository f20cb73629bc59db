package manifest

// ValidateReferences (tests only) checks every ${{ }} reference of an unrendered manifest:
// syntax, namespaces, system variables, declarations, and that references
// appear only in fields that accept them. It also checks variable names and
// values. Values that contain references are validated once rendered.
// git.branch and git.sha need spec.manifest; see ValidateReferencesFor for
// manifests fetched from a repository, which may omit it.
func ValidateReferences(m *Manifest) Errors {
	return ValidateReferencesFor(m, m.Spec.Manifest != nil)
}
