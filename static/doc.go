// Package static embeds the dashboard's browser assets: the hand-written
// stylesheet and htmx, vendored unchanged from npm with its licence.
//
// It must not import anything from Slipway; the app serves FS under /static.
package static
