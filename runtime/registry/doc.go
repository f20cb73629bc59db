// Package registry gets images to every node of a Swarm.
//
//   - Server is the embedded registry: github.com/distribution/distribution/v3
//     storing on a directory, behind HTTP basic authentication, with
//     deletion on and a garbage collection that runs once deletions settle.
//     `slipway registry serve` runs it inside the slipway-registry service.
//   - Relay forwards TCP connections. `slipway registry relay` runs it as
//     the global slipway-registry-relay service, which publishes its port in
//     host mode on every node: Docker trusts a plain-HTTP registry only on
//     127.0.0.0/8, so every node's engine pulls from 127.0.0.1:<port>, and
//     the relay carries the connection over the slipway-registry overlay to
//     the registry, wherever it runs. No node's daemon.json is edited.
//   - Embedded makes (and keeps) those Swarm objects: the overlay, the
//     password secret, the registry service pinned to the node holding its
//     volume, and the relay.
//   - Target says where images go: the embedded registry, an external one
//     ([registry] url, user, password_file), or nowhere (a one-node Swarm,
//     where a local image ID is enough). Push pushes a built image there
//     and returns its digest-pinned reference; Auth is the
//     X-Registry-Auth value Swarm needs to pull it on every node.
//   - Prune deletes the manifests no retained deployment uses.
//
// It knows Docker and HTTP, not Postgres: it must not import store, jobs,
// app or the pipeline.
package registry
