package manifest

// VariableUses maps each variable name the manifest references as
// ${{ vars.<name> }} to the field paths that reference it, in walk order.
// A variable set in a variables table but absent here reaches no
// container: nothing renders it.
func VariableUses(m *Manifest) map[string][]string {
	uses := map[string][]string{}
	add := func(path string, ref Reference) {
		if ref.Namespace != NamespaceVars {
			return
		}
		for _, p := range uses[ref.Name] {
			if p == path {
				return
			}
		}
		uses[ref.Name] = append(uses[ref.Name], path)
	}
	walkFields(m, func(f *field) {
		if f.kind == fieldInt {
			if ref, ok := wholeReference(f.num.Ref); ok {
				add(f.path, ref)
			}
			return
		}
		_ = scanTemplate(f.value, nil, func(r Reference) { add(f.path, r) })
	})
	return uses
}
