package service

import (
	"fmt"
	"slices"

	"github.com/slipwayhq/slipway/manifest"
)

// Field edits of routes, jobs, files, exports and imports. Each returns the
// edit for EditManifest; the whole result is validated there, so these only
// find what they change and refuse what names nothing (…_unknown).

// SetRoute adds the route named r.Name, or replaces the one of that name.
func SetRoute(r manifest.Route) func(*manifest.Manifest) error {
	return func(m *manifest.Manifest) error {
		if i := slices.IndexFunc(m.Spec.Routes, func(x manifest.Route) bool { return x.Name == r.Name }); i >= 0 {
			m.Spec.Routes[i] = r
			return nil
		}
		m.Spec.Routes = append(m.Spec.Routes, r)
		return nil
	}
}

// RemoveRoute removes the route named name.
func RemoveRoute(name string) func(*manifest.Manifest) error {
	return func(m *manifest.Manifest) error {
		return removeNamed(&m.Spec.Routes, func(x manifest.Route) bool { return x.Name == name },
			&InputError{Field: "route", Code: "route_unknown", Message: fmt.Sprintf("the manifest has no route named %q", name)})
	}
}

// SetJob adds the job named j.Name, or replaces the one of that name.
func SetJob(j manifest.Job) func(*manifest.Manifest) error {
	return func(m *manifest.Manifest) error {
		if i := slices.IndexFunc(m.Spec.Jobs, func(x manifest.Job) bool { return x.Name == j.Name }); i >= 0 {
			m.Spec.Jobs[i] = j
			return nil
		}
		m.Spec.Jobs = append(m.Spec.Jobs, j)
		return nil
	}
}

// RemoveJob removes the job named name.
func RemoveJob(name string) func(*manifest.Manifest) error {
	return func(m *manifest.Manifest) error {
		return removeNamed(&m.Spec.Jobs, func(x manifest.Job) bool { return x.Name == name },
			&InputError{Field: "job", Code: "job_unknown", Message: fmt.Sprintf("the manifest has no job %q", name)})
	}
}

// SetFile adds a read-only file to a service, or replaces the one with the
// same target.
func SetFile(serviceName string, f manifest.File) func(*manifest.Manifest) error {
	return func(m *manifest.Manifest) error {
		s, err := findService(m, serviceName)
		if err != nil {
			return err
		}
		if i := slices.IndexFunc(s.Files, func(x manifest.File) bool { return x.Target == f.Target }); i >= 0 {
			s.Files[i] = f
			return nil
		}
		s.Files = append(s.Files, f)
		return nil
	}
}

// RemoveFile removes the file a service mounts at target.
func RemoveFile(serviceName, target string) func(*manifest.Manifest) error {
	return func(m *manifest.Manifest) error {
		s, err := findService(m, serviceName)
		if err != nil {
			return err
		}
		return removeNamed(&s.Files, func(x manifest.File) bool { return x.Target == target },
			&InputError{Field: "target", Code: "file_unknown", Message: fmt.Sprintf("service %s mounts no file at %q", serviceName, target)})
	}
}

// SetExport exports a service, or replaces its export.
func SetExport(e manifest.Export) func(*manifest.Manifest) error {
	return func(m *manifest.Manifest) error {
		if i := slices.IndexFunc(m.Spec.Exports, func(x manifest.Export) bool { return x.Service == e.Service }); i >= 0 {
			m.Spec.Exports[i] = e
			return nil
		}
		m.Spec.Exports = append(m.Spec.Exports, e)
		return nil
	}
}

// RemoveExport stops exporting a service.
func RemoveExport(serviceName string) func(*manifest.Manifest) error {
	return func(m *manifest.Manifest) error {
		return removeNamed(&m.Spec.Exports, func(x manifest.Export) bool { return x.Service == serviceName },
			&InputError{Field: "service", Code: "export_unknown", Message: fmt.Sprintf("service %s is not exported", serviceName)})
	}
}

// SetImport imports another application's service, or changes the
// environment an existing import of it reaches.
func SetImport(im manifest.Import) func(*manifest.Manifest) error {
	return func(m *manifest.Manifest) error {
		if i := slices.IndexFunc(m.Spec.Imports, sameImport(im.Application, im.Service)); i >= 0 {
			m.Spec.Imports[i] = im
			return nil
		}
		m.Spec.Imports = append(m.Spec.Imports, im)
		return nil
	}
}

// RemoveImport removes the import of application's service.
func RemoveImport(application, serviceName string) func(*manifest.Manifest) error {
	return func(m *manifest.Manifest) error {
		return removeNamed(&m.Spec.Imports, sameImport(application, serviceName),
			&InputError{Field: "service", Code: "import_unknown", Message: fmt.Sprintf("the manifest imports no service %s of %s", serviceName, application)})
	}
}

func sameImport(application, serviceName string) func(manifest.Import) bool {
	return func(x manifest.Import) bool { return x.Application == application && x.Service == serviceName }
}

// removeNamed deletes the first element matching, leaving nil rather than
// an empty list so an emptied section disappears from the saved manifest;
// missing is returned when nothing matches.
func removeNamed[T any](list *[]T, match func(T) bool, missing error) error {
	i := slices.IndexFunc(*list, match)
	if i < 0 {
		return missing
	}
	*list = slices.Delete(*list, i, i+1)
	if len(*list) == 0 {
		*list = nil
	}
	return nil
}
