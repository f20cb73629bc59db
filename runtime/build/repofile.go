package build

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"unicode/utf8"
)

// MaxRepositoryFileSize bounds manifest and `path` files: a file becomes a
// Swarm config, which Docker limits to 1,024,000 bytes.
const MaxRepositoryFileSize = 1_024_000

// CodeFileTooLarge is returned for repository files over MaxRepositoryFileSize.
const CodeFileTooLarge = "file_too_large"

// ReadManifest reads the manifest file at p, relative to the repository
// root. A missing file is manifest_not_found.
func (c *Checkout) ReadManifest(p string) ([]byte, error) {
	return c.readText(p, "path", CodeManifestNotFound, "manifest file")
}

// ReadFile reads a `[[spec.services.files]] path` file, relative to the
// repository root. A missing file is file_not_found.
func (c *Checkout) ReadFile(p string) ([]byte, error) {
	return c.readText(p, "path", CodeFileNotFound, "file")
}

func (c *Checkout) readText(p, field, missingCode, what string) ([]byte, error) {
	rel, err := resolveInRepo(c.Dir, p, field, CodePathOutsideRepository)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, newError(missingCode, field, "%s %q does not exist at commit %s", what, p, c.Commit)
	}
	if err != nil {
		return nil, err
	}
	root, err := os.OpenRoot(c.Dir)
	if err != nil {
		return nil, fmt.Errorf("open checkout: %w", err)
	}
	defer root.Close()
	fi, err := root.Stat(rel)
	if err != nil {
		return nil, newError(missingCode, field, "%s %q does not exist at commit %s", what, p, c.Commit)
	}
	if !fi.Mode().IsRegular() {
		return nil, newError(missingCode, field, "%s %q is not a regular file at commit %s", what, p, c.Commit)
	}
	if fi.Size() > MaxRepositoryFileSize {
		return nil, newError(CodeFileTooLarge, field, "%s %q is %d bytes; at most %d are allowed", what, p, fi.Size(), MaxRepositoryFileSize)
	}
	b, err := root.ReadFile(rel)
	if err != nil {
		return nil, fmt.Errorf("read %s %q: %w", what, p, err)
	}
	if !utf8.Valid(b) {
		return nil, newError(CodeFileNotUTF8, field, "%s %q is not UTF-8 text", what, p)
	}
	return b, nil
}

// maxSymlinkHops matches the kernel's limit on nested symlinks.
const maxSymlinkHops = 40

// resolveInRepo resolves p (relative to the repository root dir) through
// every symlink on the way and returns the resolved path, relative to dir.
// It fails with code when p is absolute, climbs out with "..", or a symlink
// leads outside dir or into .git. When a component does not exist, it returns
// the path resolved so far joined with the rest and an error wrapping
// fs.ErrNotExist.
func resolveInRepo(dir, p, field, code string) (string, error) {
	outside := func(why string) error {
		return newError(code, field, "%q %s; paths are relative to the repository root and must stay inside it", p, why)
	}
	if p == "" {
		return "", newError(code, field, "path is empty")
	}
	if path.IsAbs(p) || filepath.IsAbs(p) {
		return "", outside("is absolute")
	}
	if err := checkPathText(p, field, code); err != nil {
		return "", err
	}
	parts := strings.Split(p, "/")
	var resolved []string
	hops := 0
	for i := 0; i < len(parts); i++ {
		part := parts[i]
		switch part {
		case "", ".":
			continue
		case "..":
			if len(resolved) == 0 {
				return "", outside("leaves the repository")
			}
			resolved = resolved[:len(resolved)-1]
			continue
		}
		if strings.EqualFold(part, ".git") {
			return "", outside("points into .git")
		}
		candidate := path.Join(append(resolved, part)...)
		fi, err := os.Lstat(filepath.Join(dir, filepath.FromSlash(candidate)))
		if errors.Is(err, fs.ErrNotExist) {
			rest := append(append([]string{}, resolved...), parts[i:]...)
			return path.Join(rest...), fmt.Errorf("%s: %w", p, fs.ErrNotExist)
		}
		if err != nil {
			// The text checks above leave little for the file system to
			// refuse, but whatever it refuses is still this field's error.
			return "", &Error{Code: code, Field: field, Message: fmt.Sprintf("%q cannot be read in the repository", p), Err: err}
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			resolved = append(resolved, part)
			continue
		}
		hops++
		if hops > maxSymlinkHops {
			return "", outside("has too many levels of symbolic links")
		}
		target, err := os.Readlink(filepath.Join(dir, filepath.FromSlash(candidate)))
		if err != nil {
			return "", fmt.Errorf("resolve %q: %w", p, err)
		}
		if path.IsAbs(target) {
			return "", outside(fmt.Sprintf("goes through the symlink %s, which points to the absolute path %s", candidate, target))
		}
		// The link's target replaces the link, relative to the link's directory.
		parts = append(strings.Split(target, "/"), parts[i+1:]...)
		i = -1
	}
	if len(resolved) == 0 {
		return ".", nil
	}
	return path.Join(resolved...), nil
}

// Limits of a repository path: Linux's NAME_MAX for one element and a
// PATH_MAX-sized whole, which no real repository comes near.
const (
	maxPathElement = 255
	maxPathBytes   = 4096
)

// checkPathText refuses a path the file system could not even look up (NUL,
// an over-long element) or that only a forged manifest would hold (other
// control characters), so the error names the field instead of surfacing
// as a raw lstat failure.
func checkPathText(p, field, code string) error {
	if i := strings.IndexFunc(p, func(r rune) bool { return r < 0x20 || r == 0x7f }); i >= 0 {
		return newError(code, field, "path %.60q contains the control character %U at byte %d", p, rune(p[i]), i)
	}
	if !utf8.ValidString(p) {
		return newError(code, field, "path %.60q is not valid UTF-8", p)
	}
	if len(p) > maxPathBytes {
		return newError(code, field, "path is %d bytes; at most %d are allowed", len(p), maxPathBytes)
	}
	for _, part := range strings.Split(p, "/") {
		if len(part) > maxPathElement {
			return newError(code, field, "path element %.40q… is %d bytes; file names are at most %d", part, len(part), maxPathElement)
		}
	}
	return nil
}
