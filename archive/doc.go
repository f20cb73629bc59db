// Package archive moves the contents of a directory as a tar stream
// between a short-lived container and the worker that backs it up or
// restores it.
//
// Write and Extract are the tar side: regular files, directories and
// symbolic links with their modes, owners and modification times (other
// file types are skipped and counted). Extract works through an os.Root,
// so no entry, link or "../" name can write outside the directory.
//
// Send and Receive are the container side (`slipway archive send|receive`):
// they stream to or from an Endpoint over HTTP, on a unix socket the
// worker mounts into the container, or on TCP, with a bearer token only
// that run knows. Endpoint is the worker side.
//
// It imports only the standard library; it must not import anything from
// Slipway.
package archive
