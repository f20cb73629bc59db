package archive_test

import (
	"archive/tar"
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/slipwayhq/slipway/archive"
)

// tree fills dir with files, a nested read-only directory, an empty
// directory and a symbolic link pointing outside.
func tree(t *testing.T, dir string) {
	t.Helper()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(dir, "a/b"), 0o755))
	must(os.Mkdir(filepath.Join(dir, "empty"), 0o750))
	must(os.WriteFile(filepath.Join(dir, "top.txt"), []byte("hello\n"), 0o640))
	big := bytes.Repeat([]byte{0, 1, 2, 250}, 300_000)
	must(os.WriteFile(filepath.Join(dir, "a/b/big.bin"), big, 0o600))
	must(os.WriteFile(filepath.Join(dir, "a/run.sh"), []byte("#!/x\n"), 0o755))
	must(os.Symlink("/etc/passwd", filepath.Join(dir, "a/link")))
	must(os.Chmod(filepath.Join(dir, "a/b"), 0o555))
	old := time.Date(2020, 5, 1, 12, 0, 0, 0, time.UTC)
	must(os.Chtimes(filepath.Join(dir, "top.txt"), old, old))
	t.Cleanup(func() { _ = os.Chmod(filepath.Join(dir, "a/b"), 0o755) })
}

// same compares two trees entry by entry: type, mode, content, link
// target and (files) modification time.
func same(t *testing.T, want, got string) {
	t.Helper()
	n := 0
	err := filepath.Walk(want, func(p string, wi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(want, p)
		gi, err := os.Lstat(filepath.Join(got, rel))
		if err != nil {
			t.Errorf("%s missing: %v", rel, err)
			return nil
		}
		n++
		if rel != "." && wi.Mode() != gi.Mode() {
			t.Errorf("%s mode %v, want %v", rel, gi.Mode(), wi.Mode())
		}
		switch {
		case wi.Mode()&os.ModeSymlink != 0:
			wl, _ := os.Readlink(p)
			gl, _ := os.Readlink(filepath.Join(got, rel))
			if wl != gl {
				t.Errorf("%s -> %q, want %q", rel, gl, wl)
			}
		case wi.Mode().IsRegular():
			wb, _ := os.ReadFile(p)
			gb, _ := os.ReadFile(filepath.Join(got, rel))
			if !bytes.Equal(wb, gb) {
				t.Errorf("%s differs", rel)
			}
			if !wi.ModTime().Equal(gi.ModTime()) {
				t.Errorf("%s mtime %v, want %v", rel, gi.ModTime(), wi.ModTime())
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < 7 {
		t.Fatalf("compared only %d entries", n)
	}
}

func TestWriteExtract_RoundTrip(t *testing.T) {
	t.Parallel()
	src, dst := t.TempDir(), t.TempDir()
	tree(t, src)
	var buf bytes.Buffer
	st, err := archive.Write(&buf, src)
	if err != nil {
		t.Fatal(err)
	}
	if st.Files != 3 || st.Links != 1 || st.Dirs != 3 {
		t.Errorf("write stats = %+v", st)
	}
	if _, err := archive.Extract(&buf, dst); err != nil {
		t.Fatal(err)
	}
	same(t, src, dst)
	t.Cleanup(func() { _ = os.Chmod(filepath.Join(dst, "a/b"), 0o755) })
}

func TestExtract_RefusesEscapes(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name    string
		entries func(tw *tar.Writer)
	}{
		{"dot-dot name", func(tw *tar.Writer) { file(tw, "../evil", "x") }},
		{"absolute name", func(tw *tar.Writer) { file(tw, "/evil", "x") }},
		{"through a symlink", func(tw *tar.Writer) {
			_ = tw.WriteHeader(&tar.Header{Name: "out", Typeflag: tar.TypeSymlink, Linkname: "..", Mode: 0o777})
			file(tw, "out/evil", "x")
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			parent := t.TempDir()
			dst := filepath.Join(parent, "root")
			if err := os.Mkdir(dst, 0o755); err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			tw := tar.NewWriter(&buf)
			tt.entries(tw)
			_ = tw.Close()
			if _, err := archive.Extract(&buf, dst); err == nil {
				t.Error("extract succeeded")
			}
			if _, err := os.Stat(filepath.Join(parent, "evil")); err == nil {
				t.Error("a file was written outside the directory")
			}
		})
	}
}

func file(tw *tar.Writer, name, body string) {
	_ = tw.WriteHeader(&tar.Header{Name: name, Typeflag: tar.TypeReg, Mode: 0o644, Size: int64(len(body))})
	_, _ = tw.Write([]byte(body))
}

// TestSendReceive_OverUnixSocket runs both directions through an Endpoint
// on a unix socket, and refuses a wrong token.
func TestSendReceive_OverUnixSocket(t *testing.T) {
	t.Parallel()
	src, dst := t.TempDir(), t.TempDir()
	tree(t, src)
	if err := os.WriteFile(filepath.Join(dst, "stale"), []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(t.TempDir(), "a.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	var stored bytes.Buffer
	ep := &archive.Endpoint{Token: "s3cret",
		Upload:   func(_ context.Context, r io.Reader) error { _, err := io.Copy(&stored, r); return err },
		Download: func(_ context.Context, w io.Writer) error { _, err := w.Write(stored.Bytes()); return err },
	}
	srv := &http.Server{Handler: ep}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	url := "unix://" + sock

	if _, err := archive.Send(t.Context(), url, "wrong", src); err == nil || !strings.Contains(err.Error(), "archive_token_invalid") {
		t.Fatalf("send with a wrong token: %v", err)
	}
	if _, err := archive.Send(t.Context(), url, "s3cret", src); err != nil {
		t.Fatal(err)
	}
	if _, err := archive.Receive(t.Context(), url, "s3cret", dst); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dst, "stale")); !os.IsNotExist(err) {
		t.Error("receive kept a file the archive does not have")
	}
	same(t, src, dst)
	t.Cleanup(func() { _ = os.Chmod(filepath.Join(dst, "a/b"), 0o755) })
}
