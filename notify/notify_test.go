package notify_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net"
	"net/mail"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/slipwayhq/slipway/keyring"
	"github.com/slipwayhq/slipway/notify"
	"github.com/slipwayhq/slipway/notify/notifytest"
	"github.com/slipwayhq/slipway/notify/send"
	"github.com/slipwayhq/slipway/outbound"
	"github.com/slipwayhq/slipway/store"
	"github.com/slipwayhq/slipway/store/storetest"
)

type testBundle struct {
	ctx       context.Context
	st        *store.Store
	svc       *notify.Service
	deliverer *notify.Deliverer
	tenant    storetest.Tenant
	// queued are the deliveries the emitter queued, in order.
	queued []string
}

// loopback dials anything: the tests' receivers listen on 127.0.0.1.
func loopback(ctx context.Context, network, address string) (net.Conn, error) {
	var d net.Dialer
	return d.DialContext(ctx, network, address)
}

func setup(t *testing.T) *testBundle {
	t.Helper()
	st := storetest.New(t)
	key, err := keyring.NewKey(bytes.Repeat([]byte{9}, keyring.KeySize))
	if err != nil {
		t.Fatal(err)
	}
	b := &testBundle{ctx: context.Background(), st: st, tenant: storetest.NewTenant(t, st, "acme", "shop")}
	now := func() time.Time { return time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC) }
	b.svc = &notify.Service{Store: st, Keyring: keyring.New(key), Now: now, Emitter: &notify.Emitter{
		PublicURL: "https://slipway.example.com/",
		Enqueue: func(_ context.Context, _ *store.Store, teamID, deliveryID string) error {
			b.queued = append(b.queued, deliveryID)
			return nil
		},
	}}
	b.deliverer = &notify.Deliverer{Service: b.svc, Dial: loopback}
	return b
}

func ptr[T any](v T) *T { return &v }

func (b *testBundle) create(t *testing.T, in notify.Input) (notify.Destination, string) {
	t.Helper()
	d, secret, err := b.svc.Create(b.ctx, b.tenant.Team.ID, in)
	if err != nil {
		t.Fatalf("create destination: %v", err)
	}
	return d, secret
}

// failedDeployment is the event every kind's test sends.
func (b *testBundle) failedDeployment() notify.Event {
	return notify.Event{
		Kind: notify.DeploymentFailed, TeamID: b.tenant.Team.ID, ApplicationID: b.tenant.App.ID,
		EnvironmentID: b.tenant.Env.ID, DeploymentID: "dep_abc", Code: "rollout_failed",
		Message: "service web: task exited with code 1",
		At:      time.Date(2026, 3, 1, 11, 59, 0, 0, time.UTC),
	}
}

func (b *testBundle) emit(t *testing.T, ev notify.Event) {
	t.Helper()
	if err := b.svc.Emitter.Emit(b.ctx, b.st, ev); err != nil {
		t.Fatalf("emit: %v", err)
	}
}

func (b *testBundle) deliverAll(t *testing.T) {
	t.Helper()
	for _, id := range b.queued {
		if err := b.deliverer.Deliver(b.ctx, b.tenant.Team.ID, id, false); err != nil {
			t.Fatalf("deliver %s: %v", id, err)
		}
	}
	b.queued = nil
}

// TestDeliverer_Webhook checks the generic webhook: a JSON body naming
// application, environment, deployment and link, signed with HMAC-SHA256
// over the timestamp and body.
func TestDeliverer_Webhook(t *testing.T) {
	t.Parallel()
	b := setup(t)
	rcv := notifytest.NewHTTPReceiver(t, 200)
	_, secret := b.create(t, notify.Input{Name: ptr("hook"), Kind: ptr(notify.KindWebhook), URL: ptr(rcv.URL + "/hook?token=abc")})
	if len(secret) < 32 {
		t.Fatalf("generated secret %q is too short", secret)
	}
	b.emit(t, b.failedDeployment())
	b.deliverAll(t)
	req := rcv.Wait(t, 1, 10*time.Second)[0]
	if req.Method != "POST" || req.Path != "/hook" || req.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("request %s %s %q", req.Method, req.Path, req.Header.Get("Content-Type"))
	}
	ts, err := strconv.ParseInt(req.Header.Get(send.TimestampHeader), 10, 64)
	if err != nil {
		t.Fatalf("timestamp header: %v", err)
	}
	if got, want := req.Header.Get(send.SignatureHeader), send.Sign([]byte(secret), ts, req.Body); got != want {
		t.Fatalf("signature %q, want %q", got, want)
	}
	if send.Sign([]byte("another-secret-of-some-length"), ts, req.Body) == req.Header.Get(send.SignatureHeader) {
		t.Fatal("the signature does not depend on the key")
	}
	if req.Header.Get(send.EventHeader) != "deployment.failed" || !strings.HasPrefix(req.Header.Get(send.DeliveryHeader), "dlv_") {
		t.Fatalf("event headers %v", req.Header)
	}
	var body map[string]any
	if err := json.Unmarshal(req.Body, &body); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"kind": "deployment.failed", "application": "shop", "environment": "production", "deployment_id": "dep_abc",
		"code": "rollout_failed", "url": "https://slipway.example.com/applications/" + b.tenant.App.ID + "/deployments/dep_abc",
		"title": "Deployment failed: shop/production", "delivery_id": req.Header.Get(send.DeliveryHeader),
	}
	for k, v := range want {
		if body[k] != v {
			t.Errorf("body[%q] = %v, want %v", k, body[k], v)
		}
	}
	if bytes.Contains(req.Body, []byte(secret)) || bytes.Contains(req.Body, []byte("token=abc")) {
		t.Fatal("the body carries a credential")
	}
}

// TestDeliverer_Slack checks the incoming-webhook format: text (the
// notification's fallback) and Block Kit blocks (header plain_text,
// section mrkdwn, context with a link), mrkdwn markup escaped.
func TestDeliverer_Slack(t *testing.T) {
	t.Parallel()
	b := setup(t)
	rcv := notifytest.NewHTTPReceiver(t, 200)
	b.create(t, notify.Input{Name: ptr("ops"), Kind: ptr(notify.KindSlack), URL: ptr(rcv.URL + "/services/T000/B000/XXXX")})
	ev := b.failedDeployment()
	ev.Message = "<!channel> & broke"
	b.emit(t, ev)
	b.deliverAll(t)
	req := rcv.Wait(t, 1, 10*time.Second)[0]
	var msg struct {
		Text   string `json:"text"`
		Blocks []struct {
			Type string `json:"type"`
			Text *struct {
				Type string `json:"type"`
				Text string `json:"text"`
			} `json:"text"`
			Elements []struct {
				Type string `json:"type"`
				Text string `json:"text"`
			} `json:"elements"`
		} `json:"blocks"`
	}
	dec := json.NewDecoder(bytes.NewReader(req.Body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&msg); err != nil {
		t.Fatalf("slack body %s: %v", req.Body, err)
	}
	if msg.Text != "Deployment failed: shop/production" {
		t.Fatalf("text %q", msg.Text)
	}
	types := []string{}
	for _, bl := range msg.Blocks {
		types = append(types, bl.Type)
	}
	if !slices.Equal(types, []string{"header", "section", "context"}) {
		t.Fatalf("blocks %v", types)
	}
	if h := msg.Blocks[0].Text; h.Type != "plain_text" || len(h.Text) > 150 {
		t.Fatalf("header %+v", h)
	}
	sec := msg.Blocks[1].Text
	if sec.Type != "mrkdwn" || !strings.Contains(sec.Text, "*Application:* shop") || !strings.Contains(sec.Text, "*Deployment:* dep_abc") {
		t.Fatalf("section %+v", sec)
	}
	if strings.Contains(sec.Text, "<!channel>") || !strings.Contains(sec.Text, "&lt;!channel&gt; &amp; broke") {
		t.Fatalf("markup not escaped: %q", sec.Text)
	}
	link := msg.Blocks[2].Elements[0]
	if link.Type != "mrkdwn" || link.Text != "<https://slipway.example.com/applications/"+b.tenant.App.ID+"/deployments/dep_abc|Open in Slipway>" {
		t.Fatalf("context %+v", link)
	}
}

// TestDeliverer_Discord checks the execute-webhook format: an embed with
// title, url, colour, timestamp and fields within Discord's limits, and
// no mention parsed.
func TestDeliverer_Discord(t *testing.T) {
	t.Parallel()
	b := setup(t)
	rcv := notifytest.NewHTTPReceiver(t, 204)
	b.create(t, notify.Input{Name: ptr("discord"), Kind: ptr(notify.KindDiscord), URL: ptr(rcv.URL + "/api/webhooks/1/tok")})
	ev := b.failedDeployment()
	ev.Message = strings.Repeat("x", 3000)
	b.emit(t, ev)
	b.deliverAll(t)
	req := rcv.Wait(t, 1, 10*time.Second)[0]
	var msg struct {
		Username string `json:"username"`
		Content  string `json:"content"`
		Embeds   []struct {
			Title       string `json:"title"`
			Description string `json:"description"`
			URL         string `json:"url"`
			Color       int    `json:"color"`
			Timestamp   string `json:"timestamp"`
			Fields      []struct {
				Name   string `json:"name"`
				Value  string `json:"value"`
				Inline bool   `json:"inline"`
			} `json:"fields"`
		} `json:"embeds"`
		AllowedMentions struct {
			Parse []string `json:"parse"`
		} `json:"allowed_mentions"`
	}
	dec := json.NewDecoder(bytes.NewReader(req.Body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&msg); err != nil {
		t.Fatalf("discord body %s: %v", req.Body, err)
	}
	if len(msg.Embeds) != 1 || msg.AllowedMentions.Parse == nil || len(msg.AllowedMentions.Parse) != 0 || len(msg.Content) > 2000 {
		t.Fatalf("message %s", req.Body)
	}
	e := msg.Embeds[0]
	if e.Title != "Deployment failed: shop/production" || !strings.HasSuffix(e.URL, "/deployments/dep_abc") || e.Color == 0 {
		t.Fatalf("embed %+v", e)
	}
	if _, err := time.Parse(time.RFC3339, e.Timestamp); err != nil {
		t.Fatalf("timestamp %q: %v", e.Timestamp, err)
	}
	fields := map[string]string{}
	for _, f := range e.Fields {
		if len(f.Name) > 256 || len(f.Value) > 1024 {
			t.Fatalf("field %q over Discord's limits (%d)", f.Name, len(f.Value))
		}
		fields[f.Name] = f.Value
	}
	if fields["Application"] != "shop" || fields["Environment"] != "production" || fields["Deployment"] != "dep_abc" {
		t.Fatalf("fields %v", fields)
	}
}

// TestDeliverer_Email sends through a local SMTP server that offers
// STARTTLS and checks the mail it received: over TLS, logged in, to the
// recipients, naming what happened, never the password.
func TestDeliverer_Email(t *testing.T) {
	t.Parallel()
	b := setup(t)
	srv := notifytest.NewSMTPServer(t, "mailer", "pa55-word-never-shown")
	b.deliverer.RootCAs = srv.RootCAs
	b.create(t, notify.Input{
		Name: ptr("mail"), Kind: ptr(notify.KindEmail), SMTPHost: ptr(srv.Host), SMTPPort: ptr(srv.Port),
		SMTPUsername: ptr("mailer"), SMTPPassword: ptr("pa55-word-never-shown"),
		From: ptr("Slipway <slipway@example.com>"), To: &[]string{"ops@example.com", "dev@example.com"},
	})
	b.emit(t, b.failedDeployment())
	b.deliverAll(t)
	m := srv.Wait(t, 1, 10*time.Second)[0]
	if !m.TLS || m.User != "mailer" || m.From != "slipway@example.com" || !slices.Equal(m.To, []string{"ops@example.com", "dev@example.com"}) {
		t.Fatalf("mail envelope %+v", m)
	}
	msg, err := mail.ReadMessage(bytes.NewReader(m.Data))
	if err != nil {
		t.Fatal(err)
	}
	subject, _ := new(mime.WordDecoder).DecodeHeader(msg.Header.Get("Subject"))
	if subject != "[Slipway] Deployment failed: shop/production" {
		t.Fatalf("subject %q", subject)
	}
	body, _ := io.ReadAll(msg.Body)
	text := string(body)
	for _, want := range []string{"Application: shop", "Environment: production", "Deployment: dep_abc", "/deployments/dep_abc"} {
		if !strings.Contains(strings.ReplaceAll(text, "=\r\n", ""), want) {
			t.Errorf("mail body lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(string(m.Data), "pa55-word") {
		t.Fatal("the mail carries the SMTP password")
	}
}

// TestDeliverer_EmailNeedsSTARTTLS: a server without STARTTLS is refused
// before any credential is sent.
func TestDeliverer_EmailNeedsSTARTTLS(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	got := make(chan string, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		_, _ = io.WriteString(c, "220 plain ESMTP\r\n")
		buf := make([]byte, 4096)
		var all []byte
		for {
			n, err := c.Read(buf)
			all = append(all, buf[:n]...)
			if bytes.Contains(all, []byte("EHLO")) && !bytes.Contains(all, []byte("sent-ehlo")) {
				_, _ = io.WriteString(c, "250-plain\r\n250 AUTH PLAIN\r\n")
				all = append(all, []byte("sent-ehlo")...)
			}
			if err != nil {
				got <- string(all)
				return
			}
		}
	}()
	host, port, _ := net.SplitHostPort(ln.Addr().String())
	p, _ := strconv.Atoi(port)
	err = send.SMTP{Dial: loopback}.Send(context.Background(), send.SMTPServer{Host: host, Port: p, Username: "u", Password: "secret-password"},
		send.Mail{From: "a@example.com", To: []string{"b@example.com"}, Subject: "s", Text: "t"})
	var se *send.Error
	if !errors.As(err, &se) || !se.Permanent || !strings.Contains(se.Message, "STARTTLS") {
		t.Fatalf("err = %v, want a permanent STARTTLS refusal", err)
	}
	if seen := <-got; strings.Contains(seen, "AUTH") || strings.Contains(seen, "secret-password") {
		t.Fatalf("the client sent %q to a server without TLS", seen)
	}
}

// TestDeliverer_MarksFailing: three failed attempts in a row mark the
// destination failing; a success clears it; a 404 is not retried.
func TestDeliverer_MarksFailing(t *testing.T) {
	t.Parallel()
	b := setup(t)
	rcv := notifytest.NewHTTPReceiver(t, 200, 500, 502, 503)
	d, _ := b.create(t, notify.Input{Name: ptr("flaky"), Kind: ptr(notify.KindSlack), URL: ptr(rcv.URL)})
	b.emit(t, b.failedDeployment())
	id := b.queued[0]
	for i := range 3 {
		err := b.deliverer.Deliver(b.ctx, b.tenant.Team.ID, id, false)
		var pe *notify.PermanentError
		if err == nil || errors.As(err, &pe) {
			t.Fatalf("attempt %d: err = %v, want a retryable error", i+1, err)
		}
	}
	got, err := b.svc.Get(b.ctx, b.tenant.Team.ID, d.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !got.Failing() || got.ConsecutiveFailures != 3 || !strings.Contains(got.LastError, "503") {
		t.Fatalf("after three failures: failing=%v count=%d error=%q", got.Failing(), got.ConsecutiveFailures, got.LastError)
	}
	if strings.Contains(got.LastError, rcv.URL) {
		t.Fatalf("the error names the URL: %q", got.LastError)
	}
	if err := b.deliverer.Deliver(b.ctx, b.tenant.Team.ID, id, false); err != nil {
		t.Fatalf("fourth attempt: %v", err)
	}
	got, _ = b.svc.Get(b.ctx, b.tenant.Team.ID, d.ID)
	dl, _ := b.st.GetNotificationDelivery(b.ctx, b.tenant.Team.ID, id)
	if got.Failing() || got.LastError != "" || dl.Status != store.DeliveryDelivered || dl.Attempts != 4 {
		t.Fatalf("after success: failing=%v error=%q delivery=%+v", got.Failing(), got.LastError, dl)
	}
	// Delivered is delivered: another attempt sends nothing.
	if err := b.deliverer.Deliver(b.ctx, b.tenant.Team.ID, id, false); err != nil || len(rcv.Requests()) != 4 {
		t.Fatalf("a delivered delivery was sent again (%v, %d requests)", err, len(rcv.Requests()))
	}

	gone := notifytest.NewHTTPReceiver(t, 404)
	b.create(t, notify.Input{Name: ptr("gone"), Kind: ptr(notify.KindDiscord), URL: ptr(gone.URL)})
	ev := b.failedDeployment()
	ev.DeploymentID = "dep_other"
	b.emit(t, ev)
	var permanent *notify.PermanentError
	for _, qid := range b.queued[1:] {
		dl, _ := b.st.GetNotificationDelivery(b.ctx, b.tenant.Team.ID, qid)
		err := b.deliverer.Deliver(b.ctx, b.tenant.Team.ID, qid, false)
		if dl.DestinationID != d.ID && !errors.As(err, &permanent) {
			t.Fatalf("404: err = %v, want permanent", err)
		}
		dl, _ = b.st.GetNotificationDelivery(b.ctx, b.tenant.Team.ID, qid)
		if dl.DestinationID != d.ID && dl.Status != store.DeliveryFailed {
			t.Fatalf("404 delivery status %q", dl.Status)
		}
	}
}

// TestDeliverer_DialerDecides: every connection goes through the
// injected dialer, so the outbound-address check stops HTTP and SMTP
// deliveries to loopback before anything reaches the receiver, and the
// refusal is final: retrying cannot help.
func TestDeliverer_DialerDecides(t *testing.T) {
	t.Parallel()
	b := setup(t)
	policy := outbound.New(outbound.Config{})
	var dialed []string
	b.deliverer.Dial = func(ctx context.Context, network, address string) (net.Conn, error) {
		dialed = append(dialed, address)
		return policy.DialContext(ctx, network, address)
	}
	rcv := notifytest.NewHTTPReceiver(t, 200)
	srv := notifytest.NewSMTPServer(t, "", "")
	b.create(t, notify.Input{Name: ptr("hook"), Kind: ptr(notify.KindWebhook), URL: ptr(rcv.URL)})
	b.create(t, notify.Input{Name: ptr("mail"), Kind: ptr(notify.KindEmail), SMTPHost: ptr(srv.Host), SMTPPort: ptr(srv.Port),
		From: ptr("a@example.com"), To: &[]string{"b@example.com"}})
	b.emit(t, b.failedDeployment())
	for _, id := range b.queued {
		err := b.deliverer.Deliver(b.ctx, b.tenant.Team.ID, id, false)
		var pe *notify.PermanentError
		if !errors.As(err, &pe) || !strings.Contains(err.Error(), outbound.Code) {
			t.Fatalf("err = %v, want a permanent %s", err, outbound.Code)
		}
		dl, err := b.st.GetNotificationDelivery(b.ctx, b.tenant.Team.ID, id)
		if err != nil {
			t.Fatal(err)
		}
		if dl.Status != store.DeliveryFailed {
			t.Fatalf("delivery %s: status %q, want %q after a refusal", id, dl.Status, store.DeliveryFailed)
		}
	}
	if len(dialed) != 2 || len(rcv.Requests()) != 0 || len(srv.Mails()) != 0 {
		t.Fatalf("dialed %v; receiver got %d requests and %d mails", dialed, len(rcv.Requests()), len(srv.Mails()))
	}
}

// TestEmitter_Selects: only enabled destinations that chose the kind get
// a delivery; an event emitted again is one delivery; service.unhealthy
// waits for each destination's threshold; service.recovered goes only
// where the outage was told.
func TestEmitter_Selects(t *testing.T) {
	t.Parallel()
	b := setup(t)
	url := "https://hooks.example.com/x"
	fast, _ := b.create(t, notify.Input{Name: ptr("fast"), Kind: ptr(notify.KindSlack), URL: &url, UnhealthyMinutes: ptr(2),
		Events: &[]string{"deployment.failed", "service.unhealthy", "service.recovered"}})
	slow, _ := b.create(t, notify.Input{Name: ptr("slow"), Kind: ptr(notify.KindSlack), URL: &url, UnhealthyMinutes: ptr(10),
		Events: &[]string{"service.unhealthy", "service.recovered"}})
	b.create(t, notify.Input{Name: ptr("off"), Kind: ptr(notify.KindSlack), URL: &url, Enabled: ptr(false),
		Events: &[]string{"deployment.failed"}})
	team := b.tenant.Team.ID
	deliveriesTo := func(destID string) []store.NotificationDelivery {
		list, err := b.st.ListNotificationDeliveries(b.ctx, team, destID, 100)
		if err != nil {
			t.Fatal(err)
		}
		return list
	}

	b.emit(t, b.failedDeployment())
	b.emit(t, b.failedDeployment()) // the same deployment again
	if len(b.queued) != 1 || len(deliveriesTo(fast.ID)) != 1 || len(deliveriesTo(slow.ID)) != 0 {
		t.Fatalf("deployment.failed queued %d", len(b.queued))
	}

	since := time.Date(2026, 3, 1, 11, 0, 0, 0, time.UTC)
	unhealthy := func(after time.Duration) notify.Event {
		return notify.Event{Kind: notify.ServiceUnhealthy, TeamID: team, EnvironmentID: b.tenant.Env.ID, Service: "web",
			Since: &since, UnhealthyFor: after, Key: notify.UnhealthyKey(b.tenant.Env.ID, "web", since)}
	}
	b.emit(t, unhealthy(time.Minute))
	if len(deliveriesTo(fast.ID)) != 1 {
		t.Fatal("told before the threshold")
	}
	b.emit(t, unhealthy(3*time.Minute))
	b.emit(t, unhealthy(4*time.Minute))
	if len(deliveriesTo(fast.ID)) != 2 || len(deliveriesTo(slow.ID)) != 0 {
		t.Fatalf("after 3 min: fast %d, slow %d", len(deliveriesTo(fast.ID)), len(deliveriesTo(slow.ID)))
	}
	b.emit(t, notify.Event{Kind: notify.ServiceRecovered, TeamID: team, EnvironmentID: b.tenant.Env.ID, Service: "web",
		Key: notify.RecoveredKey(b.tenant.Env.ID, "web", since), DeliveredKey: notify.UnhealthyKey(b.tenant.Env.ID, "web", since)})
	if got := deliveriesTo(fast.ID); len(got) != 3 || got[0].Event != "service.recovered" {
		t.Fatalf("fast got %d deliveries", len(got))
	}
	if len(deliveriesTo(slow.ID)) != 0 {
		t.Fatal("slow was told of a recovery from an outage it never heard of")
	}
	var ev notify.Event
	_ = json.Unmarshal(deliveriesTo(fast.ID)[0].Payload, &ev)
	if ev.ApplicationName != "shop" || ev.EnvironmentName != "production" || ev.URL != "https://slipway.example.com/applications/"+b.tenant.App.ID {
		t.Fatalf("recovered event %+v", ev)
	}
}

// TestService_Validation: every refused field is named with a code, and
// credentials are write-only.
func TestService_Validation(t *testing.T) {
	t.Parallel()
	b := setup(t)
	cases := []struct {
		name string
		in   notify.Input
		want []string // field:code
	}{
		{"empty", notify.Input{}, []string{"kind:kind_invalid", "name:field_required"}},
		{"webhook without url", notify.Input{Name: ptr("x"), Kind: ptr("webhook")}, []string{"url:field_required"}},
		{"bad url and event", notify.Input{Name: ptr("x"), Kind: ptr("slack"), URL: ptr("ftp://x"), Events: &[]string{"deployment.failed", "nope"}},
			[]string{"events[1]:event_invalid", "url:url_invalid"}},
		{"short secret", notify.Input{Name: ptr("x"), Kind: ptr("webhook"), URL: ptr("https://h.example.com"), Secret: ptr("short")},
			[]string{"secret:secret_invalid"}},
		{"email", notify.Input{Name: ptr("x"), Kind: ptr("email"), SMTPHost: ptr("smtp example"), SMTPPort: ptr(70000),
			SMTPUsername: ptr("u"), From: ptr("nobody"), To: &[]string{"ok@example.com", "bad"}, URL: ptr("https://x")},
			[]string{"from:address_invalid", "smtp_host:smtp_host_invalid", "smtp_password:field_required", "smtp_port:smtp_port_invalid", "to[1]:address_invalid", "url:field_not_applicable"}},
		{"threshold", notify.Input{Name: ptr("x"), Kind: ptr("discord"), URL: ptr("https://d.example.com/a"), UnhealthyMinutes: ptr(0)},
			[]string{"unhealthy_minutes:unhealthy_minutes_invalid"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := b.svc.Create(b.ctx, b.tenant.Team.ID, tc.in)
			var ie *notify.InputError
			if !errors.As(err, &ie) {
				t.Fatalf("err = %v, want an InputError", err)
			}
			var got []string
			for _, f := range ie.Errors {
				got = append(got, f.Field+":"+f.Code)
			}
			if !slices.Equal(got, tc.want) {
				t.Fatalf("errors %v, want %v", got, tc.want)
			}
		})
	}

	d, _ := b.create(t, notify.Input{Name: ptr("ok"), Kind: ptr("webhook"), URL: ptr("https://hooks.example.com/p/secret-path"), Secret: ptr("a-signing-secret-123")})
	if _, _, err := b.svc.Create(b.ctx, b.tenant.Team.ID, notify.Input{Name: ptr("ok"), Kind: ptr("slack"), URL: ptr("https://x.example.com")}); !isField(err, "name", "destination_name_taken") {
		t.Fatalf("duplicate name: %v", err)
	}
	if _, err := b.svc.Update(b.ctx, b.tenant.Team.ID, d.ID, notify.Input{Kind: ptr("slack")}); !isField(err, "kind", "kind_immutable") {
		t.Fatalf("kind change: %v", err)
	}
	out, _ := json.Marshal(d)
	list, _ := b.svc.List(b.ctx, b.tenant.Team.ID)
	all, _ := json.Marshal(list)
	for _, leaked := range []string{"secret-path", "a-signing-secret-123"} {
		if bytes.Contains(out, []byte(leaked)) || bytes.Contains(all, []byte(leaked)) {
			t.Fatalf("%q is readable: %s", leaked, all)
		}
	}
	if d.Settings.Host != "hooks.example.com" {
		t.Fatalf("settings %+v", d.Settings)
	}
	// Another team cannot see or change it.
	other := storetest.NewTenant(t, b.st, "other", "app")
	if _, err := b.svc.Get(b.ctx, other.Team.ID, d.ID); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("other team get: %v", err)
	}
	if err := b.svc.Delete(b.ctx, other.Team.ID, d.ID); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("other team delete: %v", err)
	}
}

func isField(err error, field, code string) bool {
	var ie *notify.InputError
	return errors.As(err, &ie) && ie.First().Field == field && ie.First().Code == code
}
