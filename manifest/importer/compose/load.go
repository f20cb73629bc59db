package compose

import (
	"context"
	"regexp"
	"sort"
	"strings"

	"github.com/compose-spec/compose-go/v2/loader"
	"github.com/compose-spec/compose-go/v2/template"
	"github.com/compose-spec/compose-go/v2/types"
)

// Interpolated variables reach the model as markers, which the translation
// turns into Slipway variable references. A marker is plain ASCII, so it
// survives the loader's error messages, which name the variable when a
// marker lands where Compose needs a number, size or port.
const (
	markerOpen  = "SLWVAR_"
	markerClose = "_SLWVAR"
)

var markerRE = regexp.MustCompile(markerOpen + `([A-Za-z_][A-Za-z0-9_]*)` + markerClose)

// projectName is the name the loader needs; the application's own name is
// chosen by the translation.
const projectName = "slipway-import"

// model is a Compose file as the loader reads it.
type model struct {
	project *types.Project
	dict    map[string]any // the canonical model the project was bound from
	raw     map[string]any // before interpolation: the source's own values
	// variables are the ${VAR} the file uses, with their defaults.
	variables map[string]template.Variable
	// literal lists the variables that had to take their default value,
	// because they stand where Slipway needs a literal.
	literal []string
}

// options makes the loader read nothing but the given bytes: no include,
// extends, env_file or label_file, no path resolution against a directory,
// and no process environment.
func options(lookup func(string) (string, bool), interpolate bool) func(*loader.Options) {
	return func(o *loader.Options) {
		o.SetProjectName(projectName, true)
		o.SkipInclude, o.SkipExtends = true, true
		o.SkipResolveEnvironment, o.SkipResolveLabels = true, true
		o.ResolvePaths = false
		o.SkipInterpolation = !interpolate
		// The source's own values (its name, its ${VAR}) are read before
		// normalization fills them in.
		o.SkipNormalization = !interpolate
		o.Interpolate.LookupValue = lookup
		o.ResourceLoaders = nil
	}
}

func details(data []byte) types.ConfigDetails {
	return types.ConfigDetails{
		WorkingDir:  "/compose",
		ConfigFiles: []types.ConfigFile{{Filename: "compose.yaml", Content: data}},
		Environment: map[string]string{},
	}
}

// load reads data with the Compose loader. Every variable first becomes a
// marker; one the loader refuses as a marker (a number, size or port) is
// loaded again with its default, and reported.
func load(data []byte) (*model, error) {
	ctx := context.Background()
	none := func(string) (string, bool) { return "", false }
	raw, err := loader.LoadModelWithContext(ctx, details(data), options(none, false))
	if err != nil {
		return nil, err
	}
	m := &model{raw: raw, variables: template.ExtractVariables(raw, template.DefaultPattern)}
	literal := map[string]bool{}
	lookup := func(k string) (string, bool) {
		if literal[k] {
			return "", false
		}
		return markerOpen + k + markerClose, true
	}
	for {
		m.dict, err = loader.LoadModelWithContext(ctx, details(data), options(lookup, true))
		if err == nil {
			m.project, err = loader.LoadWithContext(ctx, details(data), options(lookup, true))
		}
		if err == nil {
			break
		}
		// The variables whose markers the loader refused take their defaults.
		progress := false
		for _, sm := range markerRE.FindAllStringSubmatch(err.Error(), -1) {
			if !literal[sm[1]] {
				literal[sm[1]], progress = true, true
			}
		}
		if !progress {
			return nil, err
		}
	}
	for k := range literal {
		m.literal = append(m.literal, k)
	}
	sort.Strings(m.literal)
	return m, nil
}

// firstLine trims a loader error to its first informative line.
func firstLine(s string) string {
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "decoding failed") {
			return l
		}
	}
	return s
}
