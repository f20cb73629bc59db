package build

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"path"
	"sort"

	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/image"
)

// Source is every repository and build field of a git build source.
type Source struct {
	URL        string
	Commit     string
	Dockerfile string
	Context    string
	Args       map[string]string
	Target     string
}

// SourceIdentity hashes every repository and build field, so changing any of
// them (a build argument or the target included) gives another identity and
// a rebuild, while an unchanged source finds its image again. Defaults are
// applied first so "Dockerfile" and "" name the same source.
func SourceIdentity(s Source) string {
	dockerfile, ctxPath := s.Dockerfile, s.Context
	if dockerfile == "" {
		dockerfile = "Dockerfile"
	}
	if ctxPath == "" {
		ctxPath = "."
	}
	type arg struct{ Name, Value string }
	args := make([]arg, 0, len(s.Args))
	for k, v := range s.Args {
		args = append(args, arg{k, v})
	}
	sort.Slice(args, func(i, j int) bool { return args[i].Name < args[j].Name })
	canonical, err := json.Marshal(struct {
		Version    int
		URL        string
		Commit     string
		Dockerfile string
		Context    string
		Args       []arg
		Target     string
	}{1, RedactURL(s.URL), s.Commit, path.Clean(dockerfile), path.Clean(ctxPath), args, s.Target})
	if err != nil {
		panic(fmt.Sprintf("marshal source identity: %v", err)) // plain strings always marshal
	}
	sum := sha256.Sum256(canonical)
	return hex.EncodeToString(sum[:])
}

// FindImage returns the newest image this installation built for team with
// the given source identity, or "" when there is none. Images are never
// shared across teams: a team without access to a private repository must
// not reuse another team's build of it.
func (b *Builder) FindImage(ctx context.Context, team, identity string) (string, error) {
	f := filters.NewArgs(
		filters.Arg("label", LabelBuilt+"=true"),
		filters.Arg("label", LabelInstallation+"="+b.Installation),
		filters.Arg("label", LabelTeam+"="+team),
		filters.Arg("label", LabelSource+"="+identity),
	)
	images, err := b.Engine.ImageList(ctx, image.ListOptions{Filters: f})
	if err != nil {
		return "", fmt.Errorf("find image for source %s: %w", identity, err)
	}
	best, created := "", int64(-1)
	for _, img := range images {
		if img.Created > created {
			best, created = img.ID, img.Created
		}
	}
	return best, nil
}
