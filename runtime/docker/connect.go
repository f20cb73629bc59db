package docker

import (
	"fmt"

	"github.com/docker/docker/client"
)

// Connect builds a client for the engine named by the environment
// (DOCKER_HOST, or the default socket) and negotiates the API version, so
// engines from 20.10 (API 1.41) on are spoken to in their own version. It
// does not contact the engine.
func Connect() (*client.Client, error) {
	cli, err := client.NewClientWithOpts(client.FromEnv, client.WithAPIVersionNegotiation())
	if err != nil {
		return nil, fmt.Errorf("connect to docker: %w", err)
	}
	return cli, nil
}
