package service

import "github.com/slipwayhq/slipway/manifest"

// EditPreviewVariable returns the edit setting (Value non-nil) or removing
// a variable of every preview ([spec.previews.variables]); v.Environment
// is ignored.
func EditPreviewVariable(v VariableEdit) func(*manifest.Manifest) error {
	return func(m *manifest.Manifest) error {
		if m.Spec.Previews == nil {
			m.Spec.Previews = &manifest.Previews{}
		}
		return editVariables(&m.Spec.Previews.Variables, v)
	}
}
