package main

// The release image is the static binary alone (FROM scratch), and so is
// the gateway's: with no CA bundle on the system, TLS to GitHub's API and
// to the ACME directory verifies against the Mozilla roots this package
// embeds. A system bundle, where there is one, is used instead.
import _ "golang.org/x/crypto/x509roots/fallback"
