package main

import (
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/slipwayhq/slipway/runtime/ingress"
	"github.com/slipwayhq/slipway/runtime/ingress/gatewayagent"
	"github.com/slipwayhq/slipway/runtime/ingress/gatewayctl"
	"github.com/slipwayhq/slipway/runtime/swarm"
)

// defaultAgentSocketDir is where the agent makes the socket its gateway
// reads from (and its last route table): a directory of its own, not
// serve's /var/run/slipway, which may be on the same node.
const defaultAgentSocketDir = "/var/lib/slipway-gateway"

// newGatewayAgentCommand is `slipway gateway-agent`, which the stack's
// global gateway service runs on every node labelled
// dev.slipway.ingress=true (docs/cluster.md).
func newGatewayAgentCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "gateway-agent",
		Short: "Keep this node's gateway, joined to the routed networks (a global service on the ingress nodes)",
		Long: `Keep the slipway-gateway container on this node's engine (DOCKER_HOST) and
join it live to the ingress overlay of every environment serve's route table
routes to. The gateway reads its routes from a socket in
$SLIPWAY_GATEWAY_SOCKET_DIR (default ` + defaultAgentSocketDir + `, a host
directory mounted at the same path) that the agent relays to serve's feed
($SLIPWAY_GATEWAY_CONTROL_URL) with the gateway token
($SLIPWAY_GATEWAY_TOKEN_FILE, e.g. a Swarm secret). Ports, image and
certificate settings are the SLIPWAY_GATEWAY_* and SLIPWAY_ACME_* variables
serve reads for its own gateway.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			log := newLogger()
			gw, err := gatewayctl.ConfigFromEnv(os.Getenv)
			if err != nil {
				return err
			}
			url, tokenFile := os.Getenv(ingress.EnvControlURL), os.Getenv(ingress.EnvTokenFile)
			if url == "" || tokenFile == "" {
				return errors.New("gateway-agent needs " + ingress.EnvControlURL + " (serve's [ingress] feed_addr) and " + ingress.EnvTokenFile + " (control_plane_missing)")
			}
			b, err := os.ReadFile(tokenFile)
			if err != nil {
				return fmt.Errorf("gateway token file: %w (gateway_token_unreadable)", err)
			}
			token := strings.TrimSpace(string(b))
			if token == "" {
				return fmt.Errorf("gateway token file %s is empty (gateway_token_missing)", tokenFile)
			}
			engine, err := swarm.NewEngine()
			if err != nil {
				return err
			}
			info, err := engine.Info(ctx)
			if err != nil {
				return fmt.Errorf("docker engine of this node: %w", err)
			}
			name := envOr(envGatewayName, gatewayctl.ContainerName)
			a := &gatewayagent.Agent{
				Engine: engine, Gateway: gw, Name: name,
				SocketDir:  envOr(envGatewaySocketDir, defaultAgentSocketDir),
				ControlURL: url, Token: token,
				// Unique per node: serve waits for every gateway to serve
				// a deployment's routes.
				GatewayName: name + "@" + info.Name,
				// Stopping, it asks serve whether this node is still an
				// ingress node, and removes the gateway if not.
				NodeID: info.Swarm.NodeID,
				Log:    log,
			}
			log.Info("gateway agent starting", "node", info.Name, "control_url", url, "container", name)
			return a.Run(ctx)
		},
	}
}
