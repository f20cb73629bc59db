// Package chart draws small line charts as inline SVG on the server: no
// script, no style attribute (the dashboard's Content-Security-Policy
// allows neither), colours from the stylesheet's chart-* classes.
//
// It is pure: it must not import anything from Slipway.
package chart
