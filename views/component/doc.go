// Package component holds small reusable templ pieces: form fields with
// their errors, the CSRF hidden input, alerts and badges. It may import
// views (for ctx values) and nothing else from Slipway.
package component
