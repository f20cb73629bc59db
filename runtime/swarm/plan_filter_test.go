package swarm

// Filter (tests only) returns the actions of one kind and operation.
func (as Actions) Filter(kind Kind, op Op) Actions {
	var out Actions
	for _, a := range as {
		if a.Kind == kind && a.Op == op {
			out = append(out, a)
		}
	}
	return out
}
