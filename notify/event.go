package notify

import (
	"fmt"
	"slices"
	"time"
)

// Kind is an event kind a destination can choose.
type Kind string

// The event kinds. Their names are stable: destinations store them.
const (
	DeploymentFailed     Kind = "deployment.failed"
	DeploymentSucceeded  Kind = "deployment.succeeded"
	DeploymentRolledBack Kind = "deployment.rolled_back"
	PreviewReady         Kind = "preview.ready"
	PreviewFailed        Kind = "preview.failed"
	ServiceUnhealthy     Kind = "service.unhealthy"
	ServiceRecovered     Kind = "service.recovered"
	CertificateFailed    Kind = "certificate.failed"
	CertificateExpiring  Kind = "certificate.expiring"
	JobFailed            Kind = "job.failed"
	BackupFailed         Kind = "backup.failed"
	// Test is what "send test" sends; no destination chooses it.
	Test Kind = "test"
)

// Kinds lists the kinds a destination can choose, in display order.
var Kinds = []Kind{
	DeploymentFailed, DeploymentSucceeded, DeploymentRolledBack,
	PreviewReady, PreviewFailed,
	ServiceUnhealthy, ServiceRecovered,
	CertificateFailed, CertificateExpiring,
	JobFailed, BackupFailed,
}

// DefaultKinds are what a new destination receives when it names none:
// the failures and the recoveries, not every success.
var DefaultKinds = []Kind{
	DeploymentFailed, DeploymentRolledBack, PreviewFailed, ServiceUnhealthy, ServiceRecovered,
	CertificateFailed, CertificateExpiring, JobFailed, BackupFailed,
}

// Label is the kind in a sentence's words, for forms and subjects.
func (k Kind) Label() string {
	switch k {
	case DeploymentFailed:
		return "Deployment failed"
	case DeploymentSucceeded:
		return "Deployment succeeded"
	case DeploymentRolledBack:
		return "Deployment rolled back"
	case PreviewReady:
		return "Preview ready"
	case PreviewFailed:
		return "Preview failed"
	case ServiceUnhealthy:
		return "Service unhealthy"
	case ServiceRecovered:
		return "Service recovered"
	case CertificateFailed:
		return "Certificate failed"
	case CertificateExpiring:
		return "Certificate expiring"
	case JobFailed:
		return "Scheduled job failed"
	case BackupFailed:
		return "Backup failed"
	case Test:
		return "Test notification"
	}
	return string(k)
}

// Bad reports whether the kind is bad news (a failure), for colours.
func (k Kind) Bad() bool {
	switch k {
	case DeploymentFailed, PreviewFailed, ServiceUnhealthy, CertificateFailed, CertificateExpiring, JobFailed, BackupFailed, DeploymentRolledBack:
		return true
	}
	return false
}

// ValidKind reports whether s names a kind a destination can choose.
func ValidKind(s string) bool { return slices.Contains(Kinds, Kind(s)) }

// CertificateExpiryWarning is how long before a certificate expires that
// certificate.expiring is told (certmagic renews 30 days before, so a
// certificate this close to its end is one whose renewals failed).
const CertificateExpiryWarning = 14 * 24 * time.Hour

// Event is what happened, as every message tells it. It holds names and
// ids only, never a secret value: it is stored with each delivery and
// sent as the generic webhook's body.
type Event struct {
	Kind   Kind      `json:"kind"`
	At     time.Time `json:"at"`
	TeamID string    `json:"team_id"`

	ApplicationID   string `json:"application_id,omitempty"`
	ApplicationName string `json:"application,omitempty"`
	EnvironmentID   string `json:"environment_id,omitempty"`
	EnvironmentName string `json:"environment,omitempty"`
	// Preview is true when the environment is a preview.
	Preview      bool   `json:"preview,omitempty"`
	DeploymentID string `json:"deployment_id,omitempty"`
	// Service is the manifest's service name (service.*), Hostname the
	// route's (certificate.*), Job the scheduled job's name (job.failed),
	// Backup the backup's id or name (backup.failed).
	Service  string `json:"service,omitempty"`
	Hostname string `json:"hostname,omitempty"`
	Job      string `json:"job,omitempty"`
	Backup   string `json:"backup,omitempty"`
	// Code and Message are the failure's, as the dashboard shows them.
	Code    string `json:"code,omitempty"`
	Message string `json:"message,omitempty"`
	// Since is when a service became unhealthy; ExpiresAt when a
	// certificate expires.
	Since     *time.Time `json:"since,omitempty"`
	ExpiresAt *time.Time `json:"expires_at,omitempty"`
	// URL links to the object in the dashboard (filled by Emit from the
	// public URL).
	URL string `json:"url,omitempty"`

	// Key deduplicates: an event emitted twice with one key is delivered
	// once per destination. Emit fills it for deployments; other emitters
	// set it (see the Key functions).
	Key string `json:"-"`
	// UnhealthyFor is how long the service has been unhealthy
	// (service.unhealthy): destinations whose threshold it has not
	// reached yet are skipped. DeliveredKey selects those told of an earlier
	// event (service.recovered goes where the outage was told).
	UnhealthyFor time.Duration `json:"-"`
	DeliveredKey string        `json:"-"`
}

// Title is the message's one-line summary.
func (e Event) Title() string {
	where := e.ApplicationName
	if e.EnvironmentName != "" {
		where += "/" + e.EnvironmentName
	}
	switch e.Kind {
	case ServiceUnhealthy, ServiceRecovered:
		return fmt.Sprintf("%s: %s in %s", e.Kind.Label(), e.Service, where)
	case CertificateFailed, CertificateExpiring:
		return fmt.Sprintf("%s: %s (%s)", e.Kind.Label(), e.Hostname, where)
	case JobFailed:
		return fmt.Sprintf("%s: %s in %s", e.Kind.Label(), e.Job, where)
	case Test:
		return "Test notification from Slipway"
	}
	if where == "" {
		return e.Kind.Label()
	}
	return fmt.Sprintf("%s: %s", e.Kind.Label(), where)
}

// Keys of the events that are emitted again and again while they last.

// UnhealthyKey names one unhealthy episode of a service.
func UnhealthyKey(environmentID, service string, since time.Time) string {
	return fmt.Sprintf("unhealthy:%s:%s:%d", environmentID, service, since.Unix())
}

// RecoveredKey names the recovery that ends the episode of UnhealthyKey.
func RecoveredKey(environmentID, service string, since time.Time) string {
	return fmt.Sprintf("recovered:%s:%s:%d", environmentID, service, since.Unix())
}

// CertificateFailedKey names one failure of a hostname's certificate
// (changedAt is when its state last changed).
func CertificateFailedKey(hostname string, changedAt time.Time) string {
	return fmt.Sprintf("certificate-failed:%s:%d", hostname, changedAt.Unix())
}

// CertificateExpiringKey names the warning about one certificate.
func CertificateExpiringKey(hostname string, expiresAt time.Time) string {
	return fmt.Sprintf("certificate-expiring:%s:%d", hostname, expiresAt.Unix())
}
