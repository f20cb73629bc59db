package manifest

import (
	"fmt"
	"sort"
	"strings"
)

// CodeReleaseIncompatible refuses a promotion whose release renders its
// build inputs differently in the target than where it was built: the
// images are deployed as built, never rebuilt.
const CodeReleaseIncompatible = "release_incompatible"

// ReleaseError is a release whose build inputs render differently in
// Target: each of Changes is "services.<name>.<field>: before -> after".
type ReleaseError struct {
	Target  string
	Changes []string
}

func (e *ReleaseError) Error() string {
	return fmt.Sprintf("the release's build inputs render differently in %s: %s; keep per-environment values out of build inputs",
		e.Target, strings.Join(e.Changes, "; "))
}

// ErrorCode is release_incompatible.
func (e *ReleaseError) ErrorCode() string { return CodeReleaseIncompatible }

// CheckRelease is the release-compatibility rule of promotions: rendered
// (the release's manifest rendered for target) must have the build inputs
// of built (its rendering where it was built). It returns nil or a
// *ReleaseError.
func CheckRelease(built, rendered *Manifest, target string) error {
	if changes := BuildInputChanges(built, rendered); len(changes) > 0 {
		return &ReleaseError{Target: target, Changes: changes}
	}
	return nil
}

// BuildInputChanges lists the build inputs (image, dockerfile, context,
// build arguments, target) that differ between two renderings of a
// release, as "services.<name>.<field>: before -> after".
func BuildInputChanges(before, after *Manifest) []string {
	var out []string
	idx := map[string]Service{}
	for _, s := range before.Spec.Services {
		idx[s.Name] = s
	}
	for _, a := range after.Spec.Services {
		b, ok := idx[a.Name]
		if !ok {
			continue
		}
		add := func(field, x, y string) {
			if x != y {
				out = append(out, fmt.Sprintf("services.%s.%s: %q -> %q", a.Name, field, x, y))
			}
		}
		add("source.image", b.Source.Image, a.Source.Image)
		bb, ab := b.Source.Build, a.Source.Build
		if bb == nil || ab == nil {
			continue
		}
		add("build.dockerfile", bb.Dockerfile, ab.Dockerfile)
		add("build.context", bb.Context, ab.Context)
		add("build.target", bb.Target, ab.Target)
		keys := map[string]bool{}
		for k := range bb.Args {
			keys[k] = true
		}
		for k := range ab.Args {
			keys[k] = true
		}
		names := make([]string, 0, len(keys))
		for k := range keys {
			names = append(names, k)
		}
		sort.Strings(names)
		for _, k := range names {
			add("build.args."+k, bb.Args[k], ab.Args[k])
		}
	}
	return out
}
