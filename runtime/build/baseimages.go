package build

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	cerrdefs "github.com/containerd/errdefs"

	"github.com/slipwayhq/slipway/outbound"
	"github.com/slipwayhq/slipway/runtime/image"
)

// checkBaseImages refuses a build whose Dockerfile names an image the
// daemon would pull (FROM, COPY --from) from a registry on an address the
// outbound policy refuses. An image present on the node is not pulled
// unless the builder pulls base images on every build (Builder.Pull), so
// it is not checked. A registry name the worker cannot resolve is left to
// the daemon. Like image pulls, this looks ahead of a connection the
// daemon makes (image.CheckPull).
func (b *Builder) checkBaseImages(ctx context.Context, req BuildRequest, paths *buildPaths) error {
	df := paths.extraDockerfile
	if df == nil {
		root, err := os.OpenRoot(paths.contextDir)
		if err != nil {
			return err
		}
		df, err = root.ReadFile(filepath.FromSlash(paths.dockerfile))
		root.Close()
		if err != nil {
			return &Error{Code: CodeBuildFailed, Field: "dockerfile", Message: "cannot read the Dockerfile", Err: err}
		}
	}
	for _, ref := range baseImages(df, req.Args) {
		if !b.Pull {
			if _, err := b.Engine.ImageInspect(ctx, ref); err == nil {
				continue
			} else if !cerrdefs.IsNotFound(err) {
				continue // not a reference the engine reads; the build says so
			}
		}
		err := image.CheckPull(ctx, req.Outbound, ref)
		var ie *image.Error
		if errors.As(err, &ie) && ie.Code == outbound.Code {
			return newError(outbound.Code, "dockerfile", "base image %s: %s", ref, ie.Message)
		}
	}
	return nil
}

// dockerfileVar is $NAME, ${NAME} or ${NAME:-default} in a Dockerfile.
var dockerfileVar = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}|\$([A-Za-z_][A-Za-z0-9_]*)`)

// baseImages lists the images a Dockerfile pulls: FROM images that are not
// an earlier stage or scratch, and COPY/ADD --from images, with ARGs
// declared before the first FROM expanded (build arguments win over their
// defaults). A reference that still holds a variable is left out: the
// daemon refuses it.
func baseImages(dockerfile []byte, args map[string]string) []string {
	global := map[string]string{}
	stages := map[string]bool{}
	seen := map[string]bool{}
	var out []string
	add := func(ref string) {
		ref = dockerfileVar.ReplaceAllStringFunc(ref, func(v string) string {
			m := dockerfileVar.FindStringSubmatch(v)
			name, def := m[1]+m[3], m[2]
			if val, ok := global[name]; ok && val != "" {
				return val
			}
			if def != "" {
				return def
			}
			return v
		})
		lower := strings.ToLower(ref)
		if ref == "" || strings.Contains(ref, "$") || lower == "scratch" || stages[lower] || seen[ref] || strings.Trim(ref, "0123456789") == "" {
			return
		}
		seen[ref] = true
		out = append(out, ref)
	}
	sawFrom := false
	for _, line := range logicalLines(string(dockerfile)) {
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		switch strings.ToUpper(fields[0]) {
		case "ARG":
			if sawFrom {
				continue
			}
			for _, a := range fields[1:] {
				name, def, _ := strings.Cut(a, "=")
				if v, ok := args[name]; ok {
					def = v
				}
				global[name] = strings.Trim(def, `"'`)
			}
		case "FROM":
			sawFrom = true
			rest := flagsDropped(fields[1:])
			if len(rest) == 0 {
				continue
			}
			add(rest[0])
			if len(rest) >= 3 && strings.EqualFold(rest[1], "as") {
				stages[strings.ToLower(rest[2])] = true
			}
		case "COPY", "ADD":
			for _, f := range fields[1:] {
				if from, ok := strings.CutPrefix(f, "--from="); ok {
					add(from)
				}
			}
		}
	}
	return out
}

// logicalLines joins continued lines (a trailing backslash) and drops
// comments and blank lines.
func logicalLines(s string) []string {
	var out []string
	var cur strings.Builder
	for _, raw := range strings.Split(s, "\n") {
		line := strings.TrimSpace(strings.TrimSuffix(raw, "\r"))
		if strings.HasPrefix(line, "#") && cur.Len() == 0 {
			continue
		}
		if cont, ok := strings.CutSuffix(line, "\\"); ok {
			cur.WriteString(cont + " ")
			continue
		}
		cur.WriteString(line)
		if l := strings.TrimSpace(cur.String()); l != "" {
			out = append(out, l)
		}
		cur.Reset()
	}
	if l := strings.TrimSpace(cur.String()); l != "" {
		out = append(out, l)
	}
	return out
}

func flagsDropped(fields []string) []string {
	for len(fields) > 0 && strings.HasPrefix(fields[0], "--") {
		fields = fields[1:]
	}
	return fields
}
