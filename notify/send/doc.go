// Package send carries one message to one destination: an HTTP POST of a
// JSON body (generic webhook signed with HMAC-SHA256, Slack incoming
// webhook, Discord webhook) or a mail over SMTP with STARTTLS.
//
// Every connection is made by the Dial function the caller passes, so the
// caller decides which addresses may be reached, where the connection is
// made. Errors never contain the destination's URL (which is a credential
// for Slack and Discord) nor the SMTP password.
//
// It imports only the standard library; it must not import anything from
// Slipway.
package send
