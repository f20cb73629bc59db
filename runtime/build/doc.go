// Package build checks out git sources and builds images from them.
//
// It holds everything the deployment pipeline needs to turn a git build
// source into a local image: isolated checkouts of one commit (go-git only,
// never the git binary), confined reads of repository files (repository-backed
// manifests and `path` files), remote branch listings for sync, Docker builds
// through the Engine API with a `.dockerignore`-honouring context tar, the
// source identity that decides whether an image can be reused, and the
// cleanup primitive for images Slipway built.
//
// It knows git and Docker and must not import Postgres, River or anything
// from store/, pipeline/, jobs/ or app/; the deployment pipeline and the
// jobs that join them call this package.
// Credentials are passed in by the caller on every call and are never
// stored, logged or put into error messages. Every connection to a remote
// is checked by the call's outbound policy where it is made (gitdial.go,
// package outbound), and errors never carry what a remote answered.
package build
