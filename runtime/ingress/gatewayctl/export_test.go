package gatewayctl

import "context"

// BuildImageFromDockerfile builds dockerfile with bin as ./slipway in its
// context under tag, for tests of images other than the dev image.
func (m *Manager) BuildImageFromDockerfile(ctx context.Context, dockerfile string, bin []byte, tag string) error {
	return m.buildImage(ctx, []tarFile{{"Dockerfile", []byte(dockerfile), 0o644}, {"slipway", bin, 0o755}}, tag, nil)
}
