package build

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/moby/patternmatcher"
	"github.com/moby/patternmatcher/ignorefile"
)

// buildPaths is where a build's context and Dockerfile are, resolved inside
// the checkout.
type buildPaths struct {
	// contextDir is the absolute context directory.
	contextDir string
	// dockerfile is the Dockerfile's name inside the context tar.
	dockerfile string
	// extraDockerfile, when set, is the Dockerfile's content to add to the
	// tar under dockerfile: the Dockerfile lies outside the context or is
	// reached through a symlink.
	extraDockerfile []byte
}

// resolveBuildPaths confines the Dockerfile and context (relative to the
// repository root) to the checkout.
func resolveBuildPaths(co *Checkout, dockerfile, contextPath string) (*buildPaths, error) {
	if dockerfile == "" {
		dockerfile = "Dockerfile"
	}
	if contextPath == "" {
		contextPath = "."
	}
	ctxRel, err := resolveInRepo(co.Dir, contextPath, "context", CodeBuildPathInvalid)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, newError(CodeBuildPathInvalid, "context", "build context %q does not exist at commit %s", contextPath, co.Commit)
	}
	if err != nil {
		return nil, err
	}
	contextDir := filepath.Join(co.Dir, filepath.FromSlash(ctxRel))
	if fi, err := os.Stat(contextDir); err != nil || !fi.IsDir() {
		return nil, newError(CodeBuildPathInvalid, "context", "build context %q is not a directory", contextPath)
	}
	dfRel, err := resolveInRepo(co.Dir, dockerfile, "dockerfile", CodeBuildPathInvalid)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, newError(CodeBuildPathInvalid, "dockerfile", "Dockerfile %q does not exist at commit %s", dockerfile, co.Commit)
	}
	if err != nil {
		return nil, err
	}
	root, err := os.OpenRoot(co.Dir)
	if err != nil {
		return nil, fmt.Errorf("open checkout: %w", err)
	}
	defer root.Close()
	if fi, err := root.Stat(dfRel); err != nil || !fi.Mode().IsRegular() {
		return nil, newError(CodeBuildPathInvalid, "dockerfile", "Dockerfile %q is not a regular file", dockerfile)
	}
	p := &buildPaths{contextDir: contextDir}
	inContext, err := filepath.Rel(filepath.FromSlash(ctxRel), filepath.FromSlash(dfRel))
	direct := path.Clean(dockerfile) == dfRel // no symlink on the way
	if err == nil && direct && !strings.HasPrefix(inContext, "..") {
		p.dockerfile = filepath.ToSlash(inContext)
		return p, nil
	}
	// Like the docker CLI, send a Dockerfile outside the context under a
	// generated name (and have the daemon drop it from the context).
	content, err := root.ReadFile(dfRel)
	if err != nil {
		return nil, fmt.Errorf("read Dockerfile: %w", err)
	}
	sum := sha256.Sum256(content)
	p.dockerfile = ".slipway-dockerfile-" + hex.EncodeToString(sum[:6])
	p.extraDockerfile = content
	return p, nil
}

// writeContext writes the build context as a tar to w. It honours the
// context's .dockerignore (with ! exceptions) the way docker build does,
// always sends the Dockerfile and .dockerignore (the daemon drops them from
// the context when .dockerignore excludes them) and never sends .git.
func writeContext(w io.Writer, p *buildPaths) error {
	root, err := os.OpenRoot(p.contextDir)
	if err != nil {
		return fmt.Errorf("open build context: %w", err)
	}
	defer root.Close()
	var patterns []string
	ignore, err := root.ReadFile(".dockerignore")
	switch {
	case err == nil:
		patterns, err = ignorefile.ReadAll(bytes.NewReader(ignore))
		if err != nil {
			return newError(CodeBuildPathInvalid, "context", ".dockerignore does not parse: %v", err)
		}
	case !errors.Is(err, fs.ErrNotExist):
		return newError(CodeBuildPathInvalid, "context", ".dockerignore cannot be read: %v", err)
	}
	pm, err := patternmatcher.New(patterns)
	if err != nil {
		return newError(CodeBuildPathInvalid, "context", ".dockerignore has an invalid pattern: %v", err)
	}
	tw := tar.NewWriter(w)
	err = filepath.WalkDir(p.contextDir, func(abs string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(p.contextDir, abs)
		if err != nil || rel == "." {
			return err
		}
		rel = filepath.ToSlash(rel)
		if d.Name() == ".git" {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		always := rel == p.dockerfile || rel == ".dockerignore"
		if !always {
			excluded, err := pm.MatchesOrParentMatches(rel)
			if err != nil {
				return fmt.Errorf("match %q against .dockerignore: %w", rel, err)
			}
			if excluded {
				// An exception pattern may re-include something below an
				// excluded directory, so only skip it when there is none.
				if d.IsDir() && !pm.Exclusions() {
					return filepath.SkipDir
				}
				return nil
			}
		}
		content := []byte(nil)
		if rel == ".dockerignore" && p.extraDockerfile != nil {
			content = append(append(bytes.TrimRight(ignore, "\n"), '\n'), p.dockerfile+"\n"...)
		}
		return addFile(tw, abs, rel, d, content)
	})
	if err != nil {
		return fmt.Errorf("write build context: %w", err)
	}
	if p.extraDockerfile != nil {
		if ignore == nil {
			// Our own .dockerignore names itself too, so the context the
			// Dockerfile sees is exactly the repository's.
			if err := addBytes(tw, ".dockerignore", []byte(".dockerignore\n"+p.dockerfile+"\n")); err != nil {
				return err
			}
		}
		if err := addBytes(tw, p.dockerfile, p.extraDockerfile); err != nil {
			return err
		}
	}
	return tw.Close()
}

func addFile(tw *tar.Writer, abs, rel string, d fs.DirEntry, replace []byte) error {
	fi, err := d.Info()
	if err != nil {
		return err
	}
	link := ""
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		if link, err = os.Readlink(abs); err != nil {
			return err
		}
	case fi.IsDir(), fi.Mode().IsRegular():
	default:
		return nil // sockets, devices and pipes are not build context
	}
	hdr, err := tar.FileInfoHeader(fi, link)
	if err != nil {
		return err
	}
	hdr.Name = rel
	if fi.IsDir() {
		hdr.Name += "/"
	}
	hdr.Uid, hdr.Gid, hdr.Uname, hdr.Gname = 0, 0, "", ""
	if replace != nil {
		hdr.Size = int64(len(replace))
	}
	if err := tw.WriteHeader(hdr); err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return nil
	}
	if replace != nil {
		_, err = tw.Write(replace)
		return err
	}
	f, err := os.Open(abs)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = io.CopyN(tw, f, hdr.Size)
	return err
}

func addBytes(tw *tar.Writer, name string, content []byte) error {
	if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(content)), Typeflag: tar.TypeReg}); err != nil {
		return err
	}
	_, err := tw.Write(content)
	return err
}
