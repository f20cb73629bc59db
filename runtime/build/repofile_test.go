package build

import (
	"testing"
)

func TestCheckout_ReadFile(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	r := newTestRepo(t, root, "files.git")
	r.write("infra/slipway/app.toml", []byte("api_version = \"slipway.dev/v1alpha1\"\n"), 0o644)
	r.write("otel/collector.yaml", []byte("receivers: {}\n"), 0o644)
	r.write("binary.dat", []byte{0xff, 0xfe, 0x00, 0x01}, 0o644)
	r.symlink("config/current.yaml", "../otel/collector.yaml")
	r.symlink("config/chain", "current.yaml")
	r.symlink("otel-dir", "otel")
	r.symlink("escape-rel", "../../../etc/passwd")
	r.symlink("escape-abs", "/etc/passwd")
	r.symlink("deep/escape", "../../outside")
	r.symlink("into-git", ".git/config")
	r.symlink("loop-a", "loop-b")
	r.symlink("loop-b", "loop-a")
	r.commit("files")
	co := mustCheckout(t, CheckoutRequest{URL: r.url(), Branch: "main"})

	ok := []struct{ path, want string }{
		{"infra/slipway/app.toml", "api_version = \"slipway.dev/v1alpha1\"\n"},
		{"./otel/../otel/collector.yaml", "receivers: {}\n"},
		{"config/current.yaml", "receivers: {}\n"},
		{"config/chain", "receivers: {}\n"},
		{"otel-dir/collector.yaml", "receivers: {}\n"},
	}
	for _, tt := range ok {
		got, err := co.ReadFile(tt.path)
		if err != nil || string(got) != tt.want {
			t.Errorf("ReadFile(%q) = %q, %v; want %q", tt.path, got, err, tt.want)
		}
	}
	bad := []struct{ path, code string }{
		{"../files.git/config", CodePathOutsideRepository},
		{"/etc/passwd", CodePathOutsideRepository},
		{"escape-rel", CodePathOutsideRepository},
		{"escape-abs", CodePathOutsideRepository},
		{"deep/escape", CodePathOutsideRepository},
		{"into-git", CodePathOutsideRepository},
		{".git/config", CodePathOutsideRepository},
		{"loop-a", CodePathOutsideRepository},
		{"", CodePathOutsideRepository},
		{"binary.dat", CodeFileNotUTF8},
		{"missing.yaml", CodeFileNotFound},
		{"otel", CodeFileNotFound},
	}
	for _, tt := range bad {
		_, err := co.ReadFile(tt.path)
		if ErrorCode(err) != tt.code {
			t.Errorf("ReadFile(%q) error = %v, want code %s", tt.path, err, tt.code)
		}
	}
	_, err := co.ReadManifest("infra/slipway/missing.toml")
	wantCode(t, err, CodeManifestNotFound)
	m, err := co.ReadManifest("infra/slipway/app.toml")
	if err != nil || len(m) == 0 {
		t.Fatalf("ReadManifest = %q, %v", m, err)
	}
}
