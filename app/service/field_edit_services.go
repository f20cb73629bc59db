package service

import (
	"fmt"
	"slices"

	"github.com/slipwayhq/slipway/manifest"
)

// AddService returns the edit adding s as a new service; a service of that
// name already there is service_name_taken (change it with EditService).
func AddService(s manifest.Service) func(*manifest.Manifest) error {
	return func(m *manifest.Manifest) error {
		if _, err := findService(m, s.Name); err == nil {
			return &InputError{Field: "name", Code: "service_name_taken", Message: fmt.Sprintf("the application already has a service %s", s.Name)}
		}
		m.Spec.Services = append(m.Spec.Services, s)
		return nil
	}
}

// RemoveService returns the edit removing the named service. Other
// services' depends_on drop it, as the manifest specification says of
// removals; a job, route or export still naming it refuses the removal
// with a service_referenced error on each of their paths, since dropping
// those silently would change what the application serves.
func RemoveService(name string) func(*manifest.Manifest) error {
	return func(m *manifest.Manifest) error {
		if _, err := findService(m, name); err != nil {
			return err
		}
		if errs := serviceReferences(m, name); len(errs) > 0 {
			return &ManifestError{Errors: errs}
		}
		for i := range m.Spec.Services {
			s := &m.Spec.Services[i]
			s.DependsOn = slices.DeleteFunc(s.DependsOn, func(d string) bool { return d == name })
			if len(s.DependsOn) == 0 {
				s.DependsOn = nil
			}
		}
		return removeNamed(&m.Spec.Services, func(x manifest.Service) bool { return x.Name == name }, nil)
	}
}

// serviceReferences lists, as field errors, every job, route and export
// naming the service.
func serviceReferences(m *manifest.Manifest, name string) manifest.Errors {
	var errs manifest.Errors
	refer := func(path, what string) {
		errs = append(errs, manifest.FieldError{Path: path, Code: "service_referenced",
			Message: fmt.Sprintf("%s still names service %s: remove it or point it elsewhere first", what, name)})
	}
	for i, j := range m.Spec.Jobs {
		if j.Service == name {
			refer(fmt.Sprintf("spec.jobs[%d].service", i), "job "+j.Name)
		}
	}
	for i, r := range m.Spec.Routes {
		if r.Service == name {
			refer(fmt.Sprintf("spec.routes[%d].service", i), "route "+r.Hostname)
		}
	}
	for i, e := range m.Spec.Exports {
		if e.Service == name {
			refer(fmt.Sprintf("spec.exports[%d].service", i), "its export")
		}
	}
	return errs
}
