package ingress

import (
	"context"
	"fmt"
	"net/http"
	"time"
)

// CertificateState is what HTTPS looks like for one route's hostname.
type CertificateState string

const (
	// CertificateNone: the route has no certificate (a private route, or
	// no certificate source covers it); it answers plain HTTP only.
	CertificateNone CertificateState = "none"
	// CertificatePending: ACME is obtaining one.
	CertificatePending CertificateState = "pending"
	// CertificateIssued: ACME issued one; ExpiresAt says until when.
	CertificateIssued CertificateState = "issued"
	// CertificateFailed: ACME could not obtain one (LastError says why);
	// the gateway keeps retrying with backoff.
	CertificateFailed CertificateState = "failed"
	// CertificateOperator: the operator's own certificate covers the name
	// (how wildcards get HTTPS until a DNS-01 provider is configured).
	CertificateOperator CertificateState = "operator"
	// CertificateInternal: the gateway's internal CA (dev); browsers do
	// not trust it unless its root is installed.
	CertificateInternal CertificateState = "internal"
)

// Valid reports whether s is one of the states above.
func (s CertificateState) Valid() bool {
	switch s {
	case CertificateNone, CertificatePending, CertificateIssued, CertificateFailed, CertificateOperator, CertificateInternal:
		return true
	}
	return false
}

// CertificateStatus is the certificate state of one routed hostname.
type CertificateStatus struct {
	Hostname  string           `json:"hostname"`
	State     CertificateState `json:"state"`
	ExpiresAt *time.Time       `json:"expires_at,omitempty"`
	// LastError is the last ACME failure: why the state is failed, or
	// why a renewal of an issued certificate failed.
	LastError string `json:"last_error,omitempty"`
}

// CertificateReport is what the gateway sends the control plane (PUT
// CertificatesPath on the same socket or URL it reads routes from): the
// state of every hostname of the route table version it serves.
type CertificateReport struct {
	TableVersion int64               `json:"table_version"`
	Certificates []CertificateStatus `json:"certificates"`
	// Gateway names the reporting gateway (its container's name, or its
	// host name). Gateways that set it also report Live.
	Gateway string `json:"gateway,omitempty"`
	// Live lists the hostnames of TableVersion the gateway can serve now:
	// redirects, and routes whose backend accepted a connection.
	Live []string `json:"live,omitempty"`
}

// CertificatesPath is where serve receives CertificateReports.
const CertificatesPath = "/internal/gateway/certificates"

// maxReportBytes bounds a report: a few hundred bytes per route.
const maxReportBytes = 32 << 20

// Validate checks every entry and names the first bad one.
func (r CertificateReport) Validate() error {
	if len(r.Gateway) > 253 {
		return TableError{Path: "gateway", Code: "gateway_name_invalid", Message: "gateway name is longer than 253 characters"}
	}
	for i, h := range r.Live {
		if msg := validHostname(h); msg != "" {
			return TableError{Path: fmt.Sprintf("live[%d]", i), Code: "live_hostname_invalid", Message: fmt.Sprintf("hostname %q %s", h, msg)}
		}
	}
	for i, c := range r.Certificates {
		if msg := validHostname(c.Hostname); msg != "" {
			return TableError{Path: fmt.Sprintf("certificates[%d].hostname", i), Code: "certificate_hostname_invalid", Message: fmt.Sprintf("hostname %q %s", c.Hostname, msg)}
		}
		if !c.State.Valid() {
			return TableError{Path: fmt.Sprintf("certificates[%d].state", i), Code: "certificate_state_invalid", Message: fmt.Sprintf("state %q is not a certificate state", c.State)}
		}
	}
	return nil
}

// CertificateReceiver is serve's handler for PUT CertificatesPath: it
// decodes and validates a report and hands it to the function (which
// stores it).
type CertificateReceiver func(ctx context.Context, r CertificateReport) error

func (f CertificateReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	receive(w, r, "certificate_report", maxReportBytes, f)
}
