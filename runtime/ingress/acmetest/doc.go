// Package acmetest runs an in-process Pebble ACME server for tests that
// obtain real certificates through the gateway: its validation authority
// resolves every name to 127.0.0.1 (except "nxdomain-" names, which do not
// exist) and connects to the gateway's HTTP and HTTPS ports.
package acmetest
