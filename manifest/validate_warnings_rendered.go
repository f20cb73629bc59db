package manifest

// RenderedWarnings returns the Warnings of rendered (m rendered for rc)
// that m itself does not show. Some settings a warning looks at, such as
// rollout.order, accept a variable that each environment may set in its
// own [spec.environments.<name>.variables], so only the rendered manifest
// tells whether the warning applies there. Each message names rc's
// environment or preview.
func RenderedWarnings(m, rendered *Manifest, rc RenderContext) Errors {
	if m == nil || rendered == nil {
		return nil
	}
	type key struct{ path, code, message string }
	shown := map[key]bool{}
	for _, w := range Warnings(m) {
		shown[key{w.Path, w.Code, w.Message}] = true
	}
	var out Errors
	for _, w := range Warnings(rendered) {
		if shown[key{w.Path, w.Code, w.Message}] {
			continue
		}
		w.Message = rc.target() + ": " + w.Message
		out = append(out, w)
	}
	return out
}
