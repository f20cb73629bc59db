// Package partial holds the fragments htmx swaps in. A page embeds the same
// partial an htmx request receives, so both render identically. May import
// views and views/component.
package partial
