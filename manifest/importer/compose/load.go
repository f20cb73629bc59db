package compose

import (
	"context"
	"regexp"
	"strconv"
	"strings"

	"github.com/compose-spec/compose-go/v2/loader"
	"github.com/compose-spec/compose-go/v2/template"
	"github.com/compose-spec/compose-go/v2/types"
)

// Each interpolation the file writes (${TAG:-1.27}, $HOST) reaches the
// model as a marker naming it, which the translation turns into a Slipway
// variable reference. A marker is plain ASCII, so it survives the loader's
// error messages, which quote it when it lands where Compose needs a number,
// size or port.
const (
	markerOpen  = "SLWVAR_"
	markerClose = "_SLWVAR"
	// sentinel is what a variable is set to while an interpolation is
	// classified.
	sentinel = "\x00slipway\x00"
)

var markerRE = regexp.MustCompile(markerOpen + `([0-9]+)` + markerClose)

// refusedRE finds a marker in a loader error, which may quote only its
// start (a size parser cuts what it takes for a unit).
var refusedRE = regexp.MustCompile(markerOpen + `([0-9]+)`)

// projectName is the name the loader needs; the application's own name is
// chosen by the translation.
const projectName = "slipway-import"

// interpolation is one ${...} text of the file.
type interpolation struct {
	text string // as written, such as ${TAG:-1.27}
	name string // the variable
	// def is the value when the variable is unset (its default), nil when
	// there is none.
	def *string
	// unset is what docker compose writes when the variable is unset.
	unset string
	// conditional is ${X:+alt} or ${X+alt}: a value chosen by whether X is
	// set, which a Slipway variable cannot express.
	conditional bool
	// literal: it stands where Slipway needs a literal value (a number,
	// size or port), so it was written as its unset value.
	literal bool
}

// interpolations are every interpolation of the file, by their text.
type interpolations struct {
	list   []*interpolation
	byText map[string]int
}

// replace is the loader's replacement function: it classifies an
// interpolation with Compose's own substitution, once with every variable
// set and once with every variable unset, and writes its marker.
func (in *interpolations) replace(substring string, mapping template.Mapping, cfg *template.Config) (string, error) {
	// The pattern matches up to the last closing brace; like Compose,
	// replace the first interpolation, then the rest of the text.
	if end := closingBrace(substring); end >= 0 && end+1 < len(substring) {
		head, err := in.replace(substring[:end+1], mapping, cfg)
		if err != nil {
			return "", err
		}
		rest, err := template.SubstituteWithOptions(substring[end+1:], mapping, template.WithoutLogging, template.WithReplacementFunction(in.replace))
		return head + rest, err
	}
	var names []string
	set, _, err := template.DefaultReplacementAppliedFunc(substring, func(k string) (string, bool) {
		names = append(names, k)
		return sentinel, true
	}, cfg)
	if err != nil || len(names) == 0 {
		return set, err // $$, or a template Compose rejects
	}
	i, seen := in.byText[substring]
	if !seen {
		unset, _, uerr := template.DefaultReplacementAppliedFunc(substring, func(string) (string, bool) { return "", false }, cfg)
		it := &interpolation{text: substring, name: names[0], unset: unset, conditional: set != sentinel}
		if uerr == nil && unset != "" && !it.conditional {
			it.def = &it.unset
		}
		i = len(in.list)
		in.list = append(in.list, it)
		in.byText[substring] = i
	}
	if it := in.list[i]; it.conditional || it.literal {
		return it.unset, nil
	}
	return markerOpen + strconv.Itoa(i) + markerClose, nil
}

// closingBrace is the index of the brace that closes the ${ substring
// starts with, or -1.
func closingBrace(s string) int {
	if !strings.HasPrefix(s, "${") {
		return -1
	}
	depth := 0
	for i := 0; i < len(s); i++ {
		switch {
		case strings.HasPrefix(s[i:], "${"):
			depth++
			i++
		case s[i] == '}':
			depth--
			if depth == 0 {
				return i
			}
		}
	}
	return -1
}

// at returns the interpolation a marker names.
func (in *interpolations) at(marker string) *interpolation {
	m := refusedRE.FindStringSubmatch(marker)
	if m == nil {
		return nil
	}
	i, _ := strconv.Atoi(m[1])
	if i >= len(in.list) {
		return nil
	}
	return in.list[i]
}

// model is a Compose file as the loader reads it.
type model struct {
	project *types.Project
	dict    map[string]any // the canonical model the project was bound from
	raw     map[string]any // before interpolation: the source's own values
	interp  *interpolations
}

// options makes the loader read nothing but the given bytes: no include,
// extends, env_file or label_file, no path resolution against a directory,
// and no process environment.
func options(in *interpolations) func(*loader.Options) {
	return func(o *loader.Options) {
		o.SetProjectName(projectName, true)
		o.SkipInclude, o.SkipExtends = true, true
		o.SkipResolveEnvironment, o.SkipResolveLabels = true, true
		o.ResolvePaths = false
		o.ResourceLoaders = nil
		if in == nil {
			// The source's own values (its name, its version) are read
			// before interpolation, before normalization fills them in and
			// before validation drops the obsolete version key; the
			// interpolated load validates.
			o.SkipInterpolation, o.SkipNormalization, o.SkipValidation = true, true, true
			return
		}
		o.Interpolate.LookupValue = func(string) (string, bool) { return "", false }
		o.Interpolate.Substitute = func(s string, m template.Mapping) (string, error) {
			return template.SubstituteWithOptions(s, m, template.WithoutLogging, template.WithReplacementFunction(in.replace))
		}
	}
}

// details hands the loader either the file's bytes or, once read, its
// model.
func details(data []byte, dict map[string]any) types.ConfigDetails {
	return types.ConfigDetails{
		WorkingDir:  "/compose",
		ConfigFiles: []types.ConfigFile{{Filename: "compose.yaml", Content: data, Config: dict}},
		Environment: map[string]string{},
	}
}

// load reads data with the Compose loader. An interpolation the loader
// refuses as a marker (a number, size or port) is loaded again as its
// unset value, and reported.
func load(data []byte) (*model, error) {
	ctx := context.Background()
	raw, err := loader.LoadModelWithContext(ctx, details(data, nil), options(nil))
	if err != nil {
		return nil, err
	}
	m := &model{raw: raw, interp: &interpolations{byText: map[string]int{}}}
	// The loader reads the model again without the version key, which it
	// would otherwise report on the process's log: the import reports it.
	read := map[string]any{}
	for k, v := range raw {
		if k != "version" {
			read[k] = v
		}
	}
	for {
		m.dict, err = loader.LoadModelWithContext(ctx, details(nil, read), options(m.interp))
		if err == nil {
			m.project, err = loader.LoadWithContext(ctx, details(nil, read), options(m.interp))
		}
		if err == nil {
			return m, nil
		}
		progress := false
		for _, marker := range refusedRE.FindAllString(err.Error(), -1) {
			if it := m.interp.at(marker); it != nil && !it.literal {
				it.literal, progress = true, true
			}
		}
		if !progress {
			return nil, err
		}
	}
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
