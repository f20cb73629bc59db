package archive

import (
	"archive/tar"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// Stats counts what Write archived or Extract restored.
type Stats struct {
	Files, Dirs, Links int
	// Skipped counts sockets, FIFOs and devices, which are not archived.
	Skipped int
	Bytes   int64
}

// Write writes the contents of dir (not dir itself) to w as a tar stream.
// Symbolic links are archived as links, never followed.
func Write(w io.Writer, dir string) (Stats, error) {
	var st Stats
	root, err := os.OpenRoot(dir)
	if err != nil {
		return st, fmt.Errorf("archive %s: %w", dir, err)
	}
	defer root.Close()
	tw := tar.NewWriter(w)
	err = fs.WalkDir(root.FS(), ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if name == "." {
			return nil
		}
		fi, err := root.Lstat(name)
		if err != nil {
			return err
		}
		link := ""
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			if link, err = root.Readlink(name); err != nil {
				return err
			}
		case fi.Mode().IsDir(), fi.Mode().IsRegular():
		default:
			st.Skipped++
			return nil
		}
		h, err := tar.FileInfoHeader(fi, link)
		if err != nil {
			return err
		}
		h.Name = name
		if fi.IsDir() {
			h.Name += "/"
		}
		h.Uname, h.Gname = "", ""
		if sys, ok := fi.Sys().(*syscall.Stat_t); ok {
			h.Uid, h.Gid = int(sys.Uid), int(sys.Gid)
		}
		h.Format = tar.FormatPAX
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		switch {
		case fi.IsDir():
			st.Dirs++
		case link != "":
			st.Links++
		default:
			st.Files++
			f, err := root.Open(name)
			if err != nil {
				return err
			}
			n, err := io.Copy(tw, f)
			f.Close()
			st.Bytes += n
			if err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return st, fmt.Errorf("archive %s: %w", dir, err)
	}
	return st, tw.Close()
}

// Extract writes the tar stream r into dir, which must exist. Entries keep
// their modes and times, and their owners when the process may set them.
func Extract(r io.Reader, dir string) (Stats, error) {
	var st Stats
	root, err := os.OpenRoot(dir)
	if err != nil {
		return st, fmt.Errorf("extract into %s: %w", dir, err)
	}
	defer root.Close()
	type dirMeta struct {
		name  string
		mode  fs.FileMode
		mtime time.Time
	}
	var dirs []dirMeta
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return st, fmt.Errorf("extract: %w", err)
		}
		name, err := cleanName(h.Name)
		if err != nil {
			return st, err
		}
		if name == "." {
			continue
		}
		if parent := path.Dir(name); parent != "." {
			if err := root.MkdirAll(parent, 0o755); err != nil {
				return st, fmt.Errorf("extract %s: %w", name, err)
			}
		}
		mode := h.FileInfo().Mode().Perm() | h.FileInfo().Mode()&(fs.ModeSetuid|fs.ModeSetgid|fs.ModeSticky)
		switch h.Typeflag {
		case tar.TypeDir:
			if err := root.Mkdir(name, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
				return st, fmt.Errorf("extract %s: %w", name, err)
			}
			dirs = append(dirs, dirMeta{name, mode, h.ModTime})
			st.Dirs++
		case tar.TypeReg:
			f, err := root.OpenFile(name, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
			if err != nil {
				return st, fmt.Errorf("extract %s: %w", name, err)
			}
			n, err := io.Copy(f, tr)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			st.Bytes += n
			if err != nil {
				return st, fmt.Errorf("extract %s: %w", name, err)
			}
			if err := root.Chmod(name, mode); err != nil {
				return st, fmt.Errorf("extract %s: %w", name, err)
			}
			st.Files++
		case tar.TypeSymlink:
			if err := root.Symlink(h.Linkname, name); err != nil {
				return st, fmt.Errorf("extract %s: %w", name, err)
			}
			st.Links++
		default:
			st.Skipped++
			continue
		}
		if err := root.Lchown(name, h.Uid, h.Gid); err != nil && !errors.Is(err, fs.ErrPermission) {
			return st, fmt.Errorf("extract %s: %w", name, err)
		}
		if h.Typeflag == tar.TypeReg {
			if err := root.Chtimes(name, h.ModTime, h.ModTime); err != nil {
				return st, fmt.Errorf("extract %s: %w", name, err)
			}
		}
	}
	// Directories get their modes and times last: writing into them
	// changed their times, and a read-only one could not be filled.
	for i := len(dirs) - 1; i >= 0; i-- {
		d := dirs[i]
		if err := root.Chmod(d.name, d.mode); err != nil {
			return st, fmt.Errorf("extract %s: %w", d.name, err)
		}
		if err := root.Chtimes(d.name, d.mtime, d.mtime); err != nil {
			return st, fmt.Errorf("extract %s: %w", d.name, err)
		}
	}
	return st, nil
}

// cleanName refuses absolute names and names that climb out of the root.
func cleanName(name string) (string, error) {
	clean := path.Clean(strings.TrimSuffix(name, "/"))
	if path.IsAbs(clean) || clean == ".." || strings.HasPrefix(clean, "../") {
		return "", fmt.Errorf("extract: entry %q leaves the directory", name)
	}
	return clean, nil
}

// Clear removes everything inside dir, keeping dir itself.
func Clear(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("clear %s: %w", dir, err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return fmt.Errorf("clear %s: %w", dir, err)
	}
	defer root.Close()
	for _, e := range entries {
		if err := root.RemoveAll(e.Name()); err != nil {
			return fmt.Errorf("clear %s: %w", filepath.Join(dir, e.Name()), err)
		}
	}
	return nil
}
