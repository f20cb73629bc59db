package manifest

import (
	"fmt"
	"strings"
)

// CodeFileURLDisabled is the code of a file:// repository URL on an
// installation that does not allow them.
const CodeFileURLDisabled = "file_url_disabled"

// FileURLErrors returns an error for every repository of m (the manifest
// repository and each git source) that names a file:// URL. Validate
// accepts such URLs, since whether they are allowed is the installation's
// choice ([git] allow_file_urls); callers that accept manifests on behalf
// of tenants add these errors when the switch is off.
func FileURLErrors(m *Manifest) Errors {
	var errs Errors
	check := func(path string, r *Repository) {
		if r == nil || r.Self || !isFileURL(r.URL) {
			return
		}
		errs = append(errs, FieldError{Path: path + ".url", Code: CodeFileURLDisabled,
			Message: fmt.Sprintf("repository url %s reads the server's file system, which this installation does not allow; use an https:// or ssh:// URL", quoteValue(r.URL))})
	}
	if ms := m.Spec.Manifest; ms != nil {
		check("spec.manifest.repository", ms.Repository)
	}
	for i, s := range m.Spec.Services {
		check(fmt.Sprintf("spec.services[%d].source.repository", i), s.Source.Repository)
	}
	return errs
}

func isFileURL(raw string) bool {
	scheme, _, ok := strings.Cut(strings.TrimSpace(raw), ":")
	return ok && strings.EqualFold(scheme, "file")
}
