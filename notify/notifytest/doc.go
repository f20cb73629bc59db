// Package notifytest runs local receivers for notification tests: an HTTP
// receiver (httptest) that records what webhooks, Slack and Discord
// deliveries post, and a real SMTP server (github.com/emersion/go-smtp)
// that offers STARTTLS with a certificate made for the test, checks the
// login and records each mail it accepts.
//
// It is test-only: product code must not import it.
package notifytest
