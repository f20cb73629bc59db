package notify

import (
	"encoding/json"
	"fmt"
	"net"
	"net/mail"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/slipwayhq/slipway/store"
)

// Destination kinds.
const (
	KindWebhook = "webhook"
	KindSlack   = "slack"
	KindDiscord = "discord"
	KindEmail   = "email"
)

// DestinationKinds lists them in display order.
var DestinationKinds = []string{KindWebhook, KindSlack, KindDiscord, KindEmail}

// FailingAfter is how many failed attempts in a row mark a destination
// failing in the dashboard and the API.
const FailingAfter = 3

// Input is a destination as people write it (API body, dashboard form,
// CLI flags). Pointers left nil keep the current value on update; the
// credentials (URL, Secret, SMTPPassword) are write-only.
type Input struct {
	Name             *string   `json:"name,omitempty"`
	Kind             *string   `json:"kind,omitempty"`
	Events           *[]string `json:"events,omitempty"`
	UnhealthyMinutes *int      `json:"unhealthy_minutes,omitempty"`
	Enabled          *bool     `json:"enabled,omitempty"`
	// URL is the webhook, Slack or Discord URL.
	URL *string `json:"url,omitempty"`
	// Secret is the generic webhook's signing key (at least 16
	// characters); a new webhook without one gets a generated key, shown
	// once.
	Secret *string `json:"secret,omitempty"`
	// SMTP settings of an e-mail destination.
	SMTPHost     *string   `json:"smtp_host,omitempty"`
	SMTPPort     *int      `json:"smtp_port,omitempty"`
	SMTPUsername *string   `json:"smtp_username,omitempty"`
	SMTPPassword *string   `json:"smtp_password,omitempty"`
	From         *string   `json:"from,omitempty"`
	To           *[]string `json:"to,omitempty"`
}

// Settings is what people may see of a destination.
type Settings struct {
	// Host is the URL's host (webhook, Slack, Discord): enough to tell
	// destinations apart without showing the URL, which is a credential.
	Host         string   `json:"host,omitempty"`
	SMTPHost     string   `json:"smtp_host,omitempty"`
	SMTPPort     int      `json:"smtp_port,omitempty"`
	SMTPUsername string   `json:"smtp_username,omitempty"`
	From         string   `json:"from,omitempty"`
	To           []string `json:"to,omitempty"`
}

// credentials are sealed: never returned, logged or shown.
type credentials struct {
	URL      string `json:"url,omitempty"`
	Secret   string `json:"secret,omitempty"`
	Password string `json:"password,omitempty"`
}

// Destination is a destination as the API and dashboard show it.
type Destination struct {
	store.NotificationDestination
	Settings Settings
}

// Failing reports whether its last FailingAfter attempts all failed.
func (d Destination) Failing() bool { return d.ConsecutiveFailures >= FailingAfter }

// Receives reports whether it chose kind.
func (d Destination) Receives(k Kind) bool { return slices.Contains(d.Events, string(k)) }

func destinationOf(row store.NotificationDestination) Destination {
	d := Destination{NotificationDestination: row}
	_ = json.Unmarshal(row.Settings, &d.Settings)
	return d
}

// FieldError is one refused field: its path in the request, a snake_case
// code and what to do.
type FieldError struct {
	Field   string `json:"field"`
	Code    string `json:"code"`
	Message string `json:"message"`
}

// InputError lists every refused field of one request.
type InputError struct {
	Errors []FieldError
}

func (e *InputError) Error() string {
	msgs := make([]string, len(e.Errors))
	for i, f := range e.Errors {
		msgs[i] = f.Field + ": " + f.Message + " (" + f.Code + ")"
	}
	return strings.Join(msgs, "; ")
}

// First is the first refused field.
func (e *InputError) First() FieldError { return e.Errors[0] }

type checker struct{ errs []FieldError }

func (c *checker) fail(field, code, format string, args ...any) {
	c.errs = append(c.errs, FieldError{Field: field, Code: code, Message: fmt.Sprintf(format, args...)})
}

func (c *checker) err() error {
	if len(c.errs) == 0 {
		return nil
	}
	return &InputError{Errors: c.errs}
}

// Limits of what a destination holds.
const (
	maxName       = 100
	maxURL        = 2000
	minSecret     = 16
	maxSecret     = 200
	maxRecipients = 20
)

// resolved is a validated destination: the row's fields and the
// credentials to seal.
type resolved struct {
	name     string
	kind     string
	events   []string
	minutes  int
	enabled  bool
	settings Settings
	creds    credentials
	// credsChanged says the credentials must be sealed again.
	credsChanged bool
}

// resolve merges in over cur (nil: a new destination) and validates the
// result, reporting every refused field.
func resolve(in Input, cur *Destination, curCreds credentials) (resolved, error) {
	var c checker
	r := resolved{minutes: 5, enabled: true, creds: curCreds}
	if cur != nil {
		r.name, r.kind, r.events, r.minutes, r.enabled, r.settings = cur.Name, cur.Kind, cur.Events, cur.UnhealthyMinutes, cur.Enabled, cur.Settings
	} else {
		for _, k := range DefaultKinds {
			r.events = append(r.events, string(k))
		}
	}
	if in.Name != nil {
		r.name = strings.TrimSpace(*in.Name)
	}
	switch {
	case r.name == "":
		c.fail("name", "field_required", "give the destination a name, such as \"ops channel\"")
	case len(r.name) > maxName:
		c.fail("name", "name_too_long", "the name is %d bytes; at most %d", len(r.name), maxName)
	}
	if in.Kind != nil {
		if cur != nil && *in.Kind != cur.Kind {
			c.fail("kind", "kind_immutable", "a %s destination stays one; create a new destination for %s", cur.Kind, *in.Kind)
		}
		r.kind = *in.Kind
	}
	if !slices.Contains(DestinationKinds, r.kind) {
		c.fail("kind", "kind_invalid", "kind must be one of %s", strings.Join(DestinationKinds, ", "))
	}
	if in.Events != nil {
		r.events = nil
		for i, e := range *in.Events {
			switch {
			case !ValidKind(e):
				c.fail(fmt.Sprintf("events[%d]", i), "event_invalid", "unknown event %q; choose from %s", e, kindList())
			case !slices.Contains(r.events, e):
				r.events = append(r.events, e)
			}
		}
	}
	if in.UnhealthyMinutes != nil {
		r.minutes = *in.UnhealthyMinutes
		if r.minutes < 1 || r.minutes > 1440 {
			c.fail("unhealthy_minutes", "unhealthy_minutes_invalid", "unhealthy_minutes must be 1 to 1440, got %d", r.minutes)
		}
	}
	if in.Enabled != nil {
		r.enabled = *in.Enabled
	}
	switch r.kind {
	case KindWebhook, KindSlack, KindDiscord:
		r.checkURL(&c, in, cur == nil)
		if r.kind == KindWebhook {
			r.checkSecret(&c, in)
		}
		r.settings.SMTPHost, r.settings.SMTPPort, r.settings.SMTPUsername, r.settings.From, r.settings.To = "", 0, "", "", nil
		for field, set := range map[string]bool{"smtp_host": in.SMTPHost != nil, "smtp_port": in.SMTPPort != nil,
			"smtp_username": in.SMTPUsername != nil, "smtp_password": in.SMTPPassword != nil, "from": in.From != nil, "to": in.To != nil} {
			if set {
				c.fail(field, "field_not_applicable", "%s is for e-mail destinations; a %s destination has a url", field, r.kind)
			}
		}
	case KindEmail:
		r.checkEmail(&c, in)
		if in.URL != nil {
			c.fail("url", "field_not_applicable", "an e-mail destination has no url; set smtp_host, from and to")
		}
	}
	if r.kind != KindWebhook && in.Secret != nil {
		c.fail("secret", "field_not_applicable", "only a generic webhook has a signing secret")
	}
	slices.SortFunc(c.errs, func(a, b FieldError) int { return strings.Compare(a.Field, b.Field) })
	return r, c.err()
}

func (r *resolved) checkURL(c *checker, in Input, create bool) {
	if in.URL == nil {
		if create {
			c.fail("url", "field_required", "the %s URL is required", r.kind)
		}
		return
	}
	raw := strings.TrimSpace(*in.URL)
	u, err := url.Parse(raw)
	switch {
	case raw == "":
		c.fail("url", "field_required", "the %s URL is required", r.kind)
		return
	case len(raw) > maxURL:
		c.fail("url", "url_too_long", "the URL is %d bytes; at most %d", len(raw), maxURL)
		return
	case err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Hostname() == "":
		c.fail("url", "url_invalid", "the URL must be an absolute https:// (or http://) URL")
		return
	case u.User != nil:
		c.fail("url", "url_invalid", "the URL must not carry a user name or password; the webhook's secret signs the body instead")
		return
	}
	r.settings.Host = u.Host
	r.creds.URL, r.credsChanged = raw, true
}

func (r *resolved) checkSecret(c *checker, in Input) {
	if in.Secret == nil {
		return
	}
	s := *in.Secret
	switch {
	case s == "":
		r.creds.Secret = "" // Service generates one
	case len(s) < minSecret || len(s) > maxSecret:
		c.fail("secret", "secret_invalid", "the signing secret must be %d to %d characters", minSecret, maxSecret)
		return
	default:
		r.creds.Secret = s
	}
	r.credsChanged = true
}

func (r *resolved) checkEmail(c *checker, in Input) {
	s := &r.settings
	s.Host = ""
	if in.SMTPHost != nil {
		s.SMTPHost = strings.TrimSpace(*in.SMTPHost)
	}
	if s.SMTPHost == "" {
		c.fail("smtp_host", "field_required", "the SMTP server's host name is required, such as smtp.example.com")
	} else if strings.ContainsAny(s.SMTPHost, " /:@") || net.ParseIP(s.SMTPHost) == nil && !validHostName(s.SMTPHost) {
		c.fail("smtp_host", "smtp_host_invalid", "%q is not a host name", s.SMTPHost)
	}
	if in.SMTPPort != nil {
		s.SMTPPort = *in.SMTPPort
	}
	if s.SMTPPort == 0 {
		s.SMTPPort = 587
	}
	if s.SMTPPort < 1 || s.SMTPPort > 65535 {
		c.fail("smtp_port", "smtp_port_invalid", "the port must be 1 to 65535 (587 for submission with STARTTLS)")
	}
	if in.SMTPUsername != nil {
		s.SMTPUsername = strings.TrimSpace(*in.SMTPUsername)
	}
	if in.SMTPPassword != nil {
		r.creds.Password, r.credsChanged = *in.SMTPPassword, true
	}
	if s.SMTPUsername != "" && r.creds.Password == "" {
		c.fail("smtp_password", "field_required", "a username needs its password")
	}
	if in.From != nil {
		s.From = strings.TrimSpace(*in.From)
	}
	if a, err := mail.ParseAddress(s.From); s.From == "" || err != nil {
		c.fail("from", "address_invalid", "from must be one e-mail address, such as slipway@example.com")
	} else {
		s.From = a.String()
	}
	if in.To != nil {
		s.To = nil
		for i, to := range *in.To {
			a, err := mail.ParseAddress(strings.TrimSpace(to))
			if err != nil {
				c.fail(fmt.Sprintf("to[%d]", i), "address_invalid", "%q is not an e-mail address", to)
				continue
			}
			s.To = append(s.To, a.Address)
		}
	}
	switch {
	case len(s.To) == 0:
		c.fail("to", "field_required", "name at least one recipient")
	case len(s.To) > maxRecipients:
		c.fail("to", "too_many_recipients", "at most %d recipients; use a list address", maxRecipients)
	}
}

// validHostName accepts DNS names: labels of letters, digits and hyphens.
func validHostName(h string) bool {
	if len(h) > 253 {
		return false
	}
	for _, l := range strings.Split(strings.TrimSuffix(h, "."), ".") {
		if l == "" || len(l) > 63 || l[0] == '-' || l[len(l)-1] == '-' {
			return false
		}
		for _, r := range l {
			if !(r == '-' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
				return false
			}
		}
	}
	return true
}

func kindList() string {
	s := make([]string, len(Kinds))
	for i, k := range Kinds {
		s[i] = string(k)
	}
	return strings.Join(s, ", ")
}

// deliveryRetention is how long deliveries are kept.
const deliveryRetention = 30 * 24 * time.Hour
