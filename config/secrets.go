package config

import (
	"fmt"
	"os"
	"strings"
)

// ReadToken returns the /metrics bearer token: the trimmed contents of
// token_file, or token; "" means metrics are off. The error names the key.
func (m Metrics) ReadToken() (string, error) {
	if m.TokenFile == "" {
		return m.Token, nil
	}
	b, err := os.ReadFile(m.TokenFile)
	if err != nil {
		return "", &Error{Key: "metrics.token_file", Code: CodeFileUnreadable, Message: err.Error()}
	}
	tok := strings.TrimSpace(string(b))
	if tok == "" {
		return "", &Error{Key: "metrics.token_file", Code: CodeRequired, Message: fmt.Sprintf("%s is empty; put the token in it, or unset metrics.token_file to turn metrics off", m.TokenFile)}
	}
	return tok, nil
}

// BaseURL is public_url without a trailing slash, or http://<listen> when
// it is unset, for links the daemon prints or posts.
func (c Config) BaseURL() string {
	if c.PublicURL != "" {
		return strings.TrimRight(c.PublicURL, "/")
	}
	return "http://" + c.Listen
}

// ReadGatewayToken returns the token the TCP route feed requires: the
// trimmed contents of gateway_token_file, or gateway_token. The error
// names the key.
func (i Ingress) ReadGatewayToken() (string, error) {
	if i.GatewayTokenFile == "" {
		return i.GatewayToken, nil
	}
	b, err := os.ReadFile(i.GatewayTokenFile)
	if err != nil {
		return "", &Error{Key: "ingress.gateway_token_file", Code: CodeFileUnreadable, Message: err.Error()}
	}
	tok := strings.TrimSpace(string(b))
	if tok == "" {
		return "", &Error{Key: "ingress.gateway_token_file", Code: CodeRequired, Message: fmt.Sprintf("%s is empty; put the gateway token in it", i.GatewayTokenFile)}
	}
	return tok, nil
}
