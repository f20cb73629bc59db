package build

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"regexp"
	"strings"
	"time"

	dockerbuild "github.com/docker/docker/api/types/build"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/image"
	"github.com/docker/docker/api/types/swarm"
	"github.com/docker/docker/client"

	"github.com/slipwayhq/slipway/outbound"
)

// Engine is the part of the Docker Engine API builds use. *client.Client
// implements it; tests wrap it to count calls.
type Engine interface {
	ImageBuild(ctx context.Context, buildContext io.Reader, options dockerbuild.ImageBuildOptions) (dockerbuild.ImageBuildResponse, error)
	ImageInspect(ctx context.Context, imageID string, opts ...client.ImageInspectOption) (image.InspectResponse, error)
	ImageList(ctx context.Context, options image.ListOptions) ([]image.Summary, error)
	ImageRemove(ctx context.Context, imageID string, options image.RemoveOptions) ([]image.DeleteResponse, error)
	ContainerList(ctx context.Context, options container.ListOptions) ([]container.Summary, error)
	ServiceList(ctx context.Context, options swarm.ServiceListOptions) ([]swarm.Service, error)
}

// Labels every image Slipway builds carries.
const (
	LabelManaged      = "dev.slipway.managed"
	LabelBuilt        = "dev.slipway.built"
	LabelInstallation = "dev.slipway.installation"
	LabelTeam         = "dev.slipway.team"
	LabelApp          = "dev.slipway.app"
	LabelEnv          = "dev.slipway.env"
	LabelSource       = "dev.slipway.source"
	LabelCommit       = "dev.slipway.commit"
)

// DefaultPrepareTimeout is reconciliation.prepare_timeout_seconds' default.
const DefaultPrepareTimeout = 300 * time.Second

// MaxBuildArgsSize bounds build arguments: the spec passes them on a command
// line and keeps that limit.
const MaxBuildArgsSize = 256 << 10

// Builder builds images from checkouts. One Builder serves a process.
type Builder struct {
	Engine Engine
	// Installation is this Slipway installation's identity. Every built image
	// is labelled with it and lookups and cleanup only see its images.
	Installation string
	// Pull refreshes base images on every build (docker build --pull). On in
	// production; off in tests and development without a registry.
	Pull bool
	// Logger receives one line per build; nil discards.
	Logger *slog.Logger
}

// Owner says whose build it is; it becomes image labels.
type Owner struct {
	Team string
	App  string
	Env  string
}

// BuildRequest is one image build from a checkout.
type BuildRequest struct {
	Checkout *Checkout
	// Dockerfile and Context are relative to the repository root;
	// "Dockerfile" and "." by default.
	Dockerfile string
	Context    string
	Args       map[string]string
	Target     string
	Owner      Owner
	// Labels are added to the image; Slipway's own labels win over them.
	Labels map[string]string
	// Tag optionally names the image (repo:tag).
	Tag string
	// Timeout bounds waiting for the build slot and the build
	// (prepare_timeout_seconds); DefaultPrepareTimeout when zero.
	Timeout time.Duration
	// Output receives the build output as text, line by line.
	Output io.Writer
	// Reuse returns an existing image with the same source identity (for the
	// same team) instead of building.
	Reuse bool
	// Outbound checks the registries of the base images the daemon would
	// pull (checkBaseImages); nil is the strict policy.
	Outbound *outbound.Policy
}

// BuildResult is what a build produced.
type BuildResult struct {
	// ImageID is the content-addressed local image ID ("sha256:...").
	ImageID string
	// Identity is the source identity the image is labelled with.
	Identity string
	// Commit is the full commit the image was built from.
	Commit string
	// Reused is true when an existing image was returned without building.
	Reused bool
}

// buildSlot serializes builds across the whole process: builds of every
// application share the host's CPU and the daemon's build cache, and the
// spec promises they run one at a time. Cross-process serialization comes
// from the job queue's concurrency.
var buildSlot = make(chan struct{}, 1)

var argName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// Source returns the identity inputs of a request.
func (r *BuildRequest) Source() Source {
	return Source{URL: r.Checkout.URL, Commit: r.Checkout.Commit, Dockerfile: r.Dockerfile, Context: r.Context, Args: r.Args, Target: r.Target}
}

// Build builds the request's Dockerfile through the Engine API. Failures are
// *Error: build_path_invalid, build_arg_invalid, build_args_too_large,
// build_failed (with the last output lines) or build_timeout.
func (b *Builder) Build(ctx context.Context, req BuildRequest) (*BuildResult, error) {
	if req.Checkout == nil || req.Checkout.Dir == "" {
		return nil, errors.New("build: request has no checkout")
	}
	if err := checkArgs(req.Args); err != nil {
		return nil, err
	}
	paths, err := resolveBuildPaths(req.Checkout, req.Dockerfile, req.Context)
	if err != nil {
		return nil, err
	}
	identity := SourceIdentity(req.Source())
	res := &BuildResult{Identity: identity, Commit: req.Checkout.Commit}
	if req.Reuse {
		id, err := b.FindImage(ctx, req.Owner.Team, identity)
		if err != nil {
			return nil, err
		}
		if id != "" {
			res.ImageID, res.Reused = id, true
			return res, nil
		}
	}
	if err := b.checkBaseImages(ctx, req, paths); err != nil {
		return nil, err
	}
	timeout := req.Timeout
	if timeout <= 0 {
		timeout = DefaultPrepareTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	select {
	case buildSlot <- struct{}{}:
		defer func() { <-buildSlot }()
	case <-ctx.Done():
		return nil, timeoutError(ctx, timeout, "waiting for another build to finish")
	}
	start := time.Now()
	id, err := b.run(ctx, req, paths, identity)
	if ctx.Err() != nil && err != nil {
		return nil, timeoutError(ctx, timeout, "building")
	}
	if err != nil {
		return nil, err
	}
	res.ImageID = id
	if b.Logger != nil {
		b.Logger.InfoContext(ctx, "image built", "image_id", id, "commit", res.Commit, "source_identity", identity, "team", req.Owner.Team, "app", req.Owner.App, "env", req.Owner.Env, "duration_ms", time.Since(start).Milliseconds())
	}
	return res, nil
}

func timeoutError(ctx context.Context, timeout time.Duration, doing string) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return &Error{Code: CodeBuildTimeout, Field: "prepare_timeout_seconds", Message: fmt.Sprintf("the build did not finish within %s while %s; raise reconciliation.prepare_timeout_seconds for longer builds", timeout, doing), Err: ctx.Err()}
	}
	return fmt.Errorf("build canceled while %s: %w", doing, ctx.Err())
}

func checkArgs(args map[string]string) error {
	total := 0
	for name, value := range args {
		if !argName.MatchString(name) {
			return newError(CodeBuildArgInvalid, "args."+name, "build argument name %q must start with a letter or underscore and hold only letters, digits and underscores", name)
		}
		total += len(name) + 1 + len(value)
	}
	if total > MaxBuildArgsSize {
		return newError(CodeBuildArgsTooLarge, "args", "build arguments total %d bytes; at most %d are allowed", total, MaxBuildArgsSize)
	}
	return nil
}

func (b *Builder) labels(req BuildRequest, identity string) map[string]string {
	l := maps.Clone(req.Labels)
	if l == nil {
		l = make(map[string]string)
	}
	maps.Copy(l, map[string]string{
		LabelManaged:      "true",
		LabelBuilt:        "true",
		LabelInstallation: b.Installation,
		LabelTeam:         req.Owner.Team,
		LabelApp:          req.Owner.App,
		LabelEnv:          req.Owner.Env,
		LabelSource:       identity,
		LabelCommit:       req.Checkout.Commit,
	})
	return l
}

func (b *Builder) run(ctx context.Context, req BuildRequest, paths *buildPaths, identity string) (string, error) {
	pr, pw := io.Pipe()
	go func() { pw.CloseWithError(writeContext(pw, paths)) }()
	defer pr.Close()

	args := make(map[string]*string, len(req.Args))
	for k, v := range req.Args {
		args[k] = &v
	}
	opts := dockerbuild.ImageBuildOptions{
		Dockerfile:  paths.dockerfile,
		BuildArgs:   args,
		Target:      req.Target,
		Labels:      b.labels(req, identity),
		Remove:      true,
		ForceRemove: true,
		PullParent:  b.Pull,
		// The classic builder: BuildKit over the API needs a session, and
		// the engine here serves the classic one to API clients.
		Version: dockerbuild.BuilderV1,
	}
	if req.Tag != "" {
		opts.Tags = []string{req.Tag}
	}
	resp, err := b.Engine.ImageBuild(ctx, pr, opts)
	if err != nil {
		var perr *Error
		if errors.As(err, &perr) {
			return "", perr
		}
		return "", &Error{Code: CodeBuildFailed, Field: "dockerfile", Message: "the Docker engine refused the build: " + err.Error()}
	}
	defer resp.Body.Close()
	id, err := readBuildOutput(resp.Body, req.Output)
	if err != nil {
		return "", err
	}
	if id == "" && req.Tag != "" {
		inspect, err := b.Engine.ImageInspect(ctx, req.Tag)
		if err != nil {
			return "", fmt.Errorf("inspect built image %s: %w", req.Tag, err)
		}
		id = inspect.ID
	}
	if id == "" {
		return "", newError(CodeBuildFailed, "dockerfile", "the build finished without reporting an image ID")
	}
	return id, nil
}

// buildMessage is one JSON message of the build stream.
type buildMessage struct {
	Stream      string `json:"stream"`
	Status      string `json:"status"`
	ID          string `json:"id"`
	Progress    string `json:"progress"`
	ErrorDetail *struct {
		Message string `json:"message"`
	} `json:"errorDetail"`
	Error string          `json:"error"`
	Aux   json.RawMessage `json:"aux"`
}

// tailLines is how much output a build_failed error carries.
const tailLines = 20

// readBuildOutput copies the stream to out as text and returns the image ID
// from the stream's aux message. An errorDetail message fails the build with
// the last lines of output.
func readBuildOutput(body io.Reader, out io.Writer) (string, error) {
	if out == nil {
		out = io.Discard
	}
	var tail []string
	emit := func(text string) {
		_, _ = io.WriteString(out, text)
		for line := range strings.SplitSeq(strings.TrimRight(text, "\n"), "\n") {
			if strings.TrimSpace(line) == "" {
				continue
			}
			tail = append(tail, line)
			if len(tail) > tailLines {
				tail = tail[1:]
			}
		}
	}
	var imageID string
	dec := json.NewDecoder(body)
	for {
		var m buildMessage
		err := dec.Decode(&m)
		if errors.Is(err, io.EOF) {
			return imageID, nil
		}
		if err != nil {
			return "", &Error{Code: CodeBuildFailed, Field: "dockerfile", Message: "the build output stream broke", Output: strings.Join(tail, "\n"), Err: err}
		}
		switch {
		case m.ErrorDetail != nil || m.Error != "":
			msg := m.Error
			if m.ErrorDetail != nil && m.ErrorDetail.Message != "" {
				msg = m.ErrorDetail.Message
			}
			emit(msg + "\n")
			return "", &Error{Code: CodeBuildFailed, Field: "dockerfile", Message: "the image build failed: " + msg, Output: strings.Join(tail, "\n")}
		case m.Stream != "":
			emit(m.Stream)
		case m.Status != "":
			line := m.Status
			if m.ID != "" {
				line = m.ID + ": " + line
			}
			if m.Progress != "" {
				line += " " + m.Progress
			}
			emit(line + "\n")
		case len(m.Aux) > 0:
			var aux struct {
				ID string `json:"ID"`
			}
			if json.Unmarshal(m.Aux, &aux) == nil && aux.ID != "" {
				imageID = aux.ID
			}
		}
	}
}
