// Package runtime is the parent of everything that talks to Docker: the
// Swarm driver (runtime/swarm), the ingress gateway (runtime/ingress), image
// builds (runtime/build) and the static health-check probe (runtime/probe),
// all on the one engine client runtime/docker builds.
//
// Code under runtime/ knows Docker, not Postgres: it must not import store/,
// pipeline/, jobs/, app/ or any database driver. The deployment pipeline
// (pipeline/) joins the two.
package runtime
