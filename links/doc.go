// Package links decides which links between applications connect: given
// what every environment of a team deployed (its rendered exports and
// imports) and the application names each deployment bound, Plan returns
// the links that should exist and, for every import that does not connect,
// why not. It is pure: pipeline/ applies a Plan to Swarm and the store, and
// app/ uses it to explain links.
//
// This package imports manifest/ only; it must not import store/,
// runtime/, pipeline/, jobs/ or app/.
package links
