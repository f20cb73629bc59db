package telemetry

import (
	"fmt"
	"net/url"
	"strings"
)

// Signals' OTLP/HTTP names, the last element of their URL path.
const (
	Traces  = "traces"
	Metrics = "metrics"
	Logs    = "logs"
)

// SignalURL is the URL a signal is exported to from [telemetry]
// otlp_endpoint: the endpoint is a base URL such as http://collector:4318
// that gets /v1/<signal> appended; one ending in /v1/traces (as traces
// endpoints were once given) has that part replaced.
func SignalURL(endpoint, signal string) (string, error) {
	u, err := url.Parse(endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("telemetry.otlp_endpoint %q: want an http(s) URL such as http://collector:4318", endpoint)
	}
	base := strings.TrimSuffix(strings.TrimSuffix(u.Path, "/"), "/v1/"+Traces)
	u.Path = base + "/v1/" + signal
	u.RawPath = ""
	return u.String(), nil
}
