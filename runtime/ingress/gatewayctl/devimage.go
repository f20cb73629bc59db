package gatewayctl

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"debug/elf"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/docker/docker/api/types/build"
)

// caBundle is copied into the dev image when the host has it, so the
// gateway can reach a public ACME directory over TLS from an otherwise
// empty image.
const caBundle = "/etc/ssl/certs/ca-certificates.crt"

// BuildDevImage builds the gateway image FROM scratch out of a static
// slipway binary (binaryPath, or the running executable when empty), with
// `slipway gateway` as entrypoint, and returns its tag
// (slipway-gateway:dev-<hash of the binary>). No registry is involved.
func (m *Manager) BuildDevImage(ctx context.Context, binaryPath string) (string, error) {
	if binaryPath == "" {
		binaryPath = "/proc/self/exe"
	}
	bin, err := os.ReadFile(binaryPath)
	if err != nil {
		return "", fmt.Errorf("read slipway binary %s: %w", binaryPath, err)
	}
	if err := checkStatic(bin); err != nil {
		return "", fmt.Errorf("slipway binary %s: %w", binaryPath, err)
	}
	sum := sha256.Sum256(bin)
	tag := "slipway-gateway:dev-" + hex.EncodeToString(sum[:8])
	if _, err := m.cli.ImageInspect(ctx, tag); err == nil {
		return tag, nil
	}
	files := []tarFile{
		{"Dockerfile", []byte(dockerfile(false)), 0o644},
		{"slipway", bin, 0o755},
	}
	if ca, err := os.ReadFile(caBundle); err == nil {
		files[0].body = []byte(dockerfile(true))
		files = append(files, tarFile{"ca-certificates.crt", ca, 0o644})
	}
	if err := m.buildImage(ctx, files, tag, map[string]string{LabelRole: "gateway-image"}); err != nil {
		return "", err
	}
	return tag, nil
}

func dockerfile(withCA bool) string {
	s := "FROM scratch\nCOPY slipway /slipway\n"
	if withCA {
		s += "COPY ca-certificates.crt /etc/ssl/certs/ca-certificates.crt\n"
	}
	return s + "VOLUME /data\nENTRYPOINT [\"/slipway\", \"gateway\"]\n"
}

// checkStatic refuses a dynamically linked binary, which would not start in
// an empty image (build it with CGO_ENABLED=0).
func checkStatic(bin []byte) error {
	f, err := elf.NewFile(bytes.NewReader(bin))
	if err != nil {
		return fmt.Errorf("not an ELF executable: %w (gateway_binary_invalid)", err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return errors.New("is dynamically linked; build it with CGO_ENABLED=0 (gateway_binary_not_static)")
		}
	}
	return nil
}

// buildImage builds the context files make under tag, with labels. The
// engine answers 200 even when the build fails: the error is in the
// progress stream, read to its end.
func (m *Manager) buildImage(ctx context.Context, files []tarFile, tag string, labels map[string]string) error {
	buildCtx, err := tarOf(files)
	if err != nil {
		return err
	}
	resp, err := m.cli.ImageBuild(ctx, buildCtx, build.ImageBuildOptions{
		Tags:        []string{tag},
		Remove:      true,
		ForceRemove: true,
		Labels:      labels,
	})
	if err != nil {
		return fmt.Errorf("build gateway image: %w", err)
	}
	defer resp.Body.Close()
	dec := json.NewDecoder(resp.Body)
	for {
		var msg struct {
			Error string `json:"error"`
		}
		if err := dec.Decode(&msg); errors.Is(err, io.EOF) {
			return nil
		} else if err != nil {
			return fmt.Errorf("build gateway image: read progress: %w", err)
		}
		if msg.Error != "" {
			return fmt.Errorf("build gateway image: %s", msg.Error)
		}
	}
}

type tarFile struct {
	name string
	body []byte
	mode int64
}

func tarOf(files []tarFile) (io.Reader, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, f := range files {
		if err := tw.WriteHeader(&tar.Header{Name: f.name, Mode: f.mode, Size: int64(len(f.body))}); err != nil {
			return nil, err
		}
		if _, err := tw.Write(f.body); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return &buf, nil
}
