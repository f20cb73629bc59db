package ingress

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"
)

const (
	// reportCheckEvery is how often the gateway looks for certificate
	// state changes it was not poked about (an on-demand certificate
	// cached during a handshake, an expiry passing).
	reportCheckEvery = 2 * time.Second
	// reportResendEvery resends an unchanged report, so a control plane
	// whose database was restored, or that missed one, catches up.
	reportResendEvery = 5 * time.Minute
)

// poke signals a buffered channel of one without blocking.
func poke(c chan<- struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}

// reportState sends the control plane the state of the route table the
// gateway serves whenever it changes (and every reportResendEvery), until
// ctx ends: its version, the certificate state of every route, and which
// routes it can serve (liveness). certs is nil when HTTPS is off: every
// route is then reported without a certificate. A control plane that is
// down or does not take reports yet costs nothing but a retry.
func reportState(ctx context.Context, f *Feeder, p *Proxy, certs *certificates, name string, changed <-chan struct{}) {
	tick := time.NewTicker(reportCheckEvery)
	defer tick.Stop()
	var sent []byte
	var sentAt time.Time
	failing := false
	for {
		select {
		case <-ctx.Done():
			return
		case <-changed:
		case <-tick.C:
		}
		t := p.Table()
		rep := CertificateReport{TableVersion: t.Version, Certificates: make([]CertificateStatus, 0, len(t.Routes)), Gateway: name, Live: p.live.hostnames(&t)}
		for i := range t.Routes {
			rep.Certificates = append(rep.Certificates, certs.status(&t.Routes[i]))
		}
		slices.SortFunc(rep.Certificates, func(a, b CertificateStatus) int { return strings.Compare(a.Hostname, b.Hostname) })
		body, err := json.Marshal(rep)
		if err != nil {
			f.Log.Error("encode certificate report", "err", err)
			continue
		}
		if bytes.Equal(body, sent) && time.Since(sentAt) < reportResendEvery {
			continue
		}
		if err := f.report(ctx, body); err != nil {
			if !failing && ctx.Err() == nil {
				f.Log.Warn("certificate state not reported to the control plane; retrying", "err", err)
			}
			failing = true
			continue
		}
		failing = false
		sent, sentAt = body, time.Now()
	}
}

// report PUTs an encoded CertificateReport to the control plane.
func (f *Feeder) report(ctx context.Context, body []byte) error {
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, f.base+CertificatesPath, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	if f.Source.Token != "" {
		req.Header.Set("Authorization", "Bearer "+f.Source.Token)
	}
	resp, err := f.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return fmt.Errorf("PUT %s: %s: %s", CertificatesPath, resp.Status, strings.TrimSpace(string(msg)))
	}
	return nil
}
