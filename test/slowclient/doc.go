// Package slowclient dials TCP connections for clients that read slowly
// or not at all: the receive buffer is as small as the kernel allows, so
// the server's writes stop being taken soon. The gateway's send-timeout
// tests (runtime/ingress) and test/desync use it.
//
// It is for tests only and must not be imported by product code.
package slowclient
