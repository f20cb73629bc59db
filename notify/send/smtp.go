package send

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"mime"
	"mime/quotedprintable"
	"net"
	"net/mail"
	"net/smtp"
	"net/textproto"
	"strconv"
	"strings"
	"time"
)

// Mail is one message to send over SMTP.
type Mail struct {
	From    string
	To      []string
	Subject string
	// Text is the plain-text body.
	Text string
}

// SMTPServer is where mail goes and how to log in. The connection always
// upgrades with STARTTLS before anything is authenticated or sent: a
// server that does not offer it is refused, so credentials and messages
// never cross the network in clear.
type SMTPServer struct {
	Host     string
	Port     int
	Username string // "" sends without authenticating
	Password string
}

// SMTP sends mail through Dial.
type SMTP struct {
	Dial DialFunc
	// RootCAs verifies the server's certificate; nil uses the system's.
	RootCAs *x509.CertPool
	// Hello is the name given in EHLO; "" is "localhost".
	Hello string
	// Now stamps the Date header; nil is time.Now.
	Now func() time.Time
}

// Send delivers m through srv. Errors name the server, never the
// password; a refusal by the server (5xx) is permanent, 4xx is retried.
func (s SMTP) Send(ctx context.Context, srv SMTPServer, m Mail) (err error) {
	if s.Dial == nil {
		return &Error{Message: "no dialer: outbound connections are not configured", Permanent: true}
	}
	ctx, cancel := context.WithTimeout(ctx, Timeout)
	defer cancel()
	addr := net.JoinHostPort(srv.Host, strconv.Itoa(srv.Port))
	conn, err := s.Dial(ctx, "tcp", addr)
	if err != nil {
		return &Error{Message: fmt.Sprintf("connect to %s: %v", addr, err), Permanent: refused(err)}
	}
	if dl, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(dl)
	}
	stop := context.AfterFunc(ctx, func() { _ = conn.Close() })
	defer stop()
	c, err := smtp.NewClient(conn, srv.Host)
	if err != nil {
		_ = conn.Close()
		return smtpError(addr, "greeting", err)
	}
	defer c.Close()
	if err := c.Hello(s.hello()); err != nil {
		return smtpError(addr, "EHLO", err)
	}
	if ok, _ := c.Extension("STARTTLS"); !ok {
		return &Error{Message: fmt.Sprintf("%s does not offer STARTTLS; Slipway sends mail only over TLS", addr), Permanent: true}
	}
	if err := c.StartTLS(&tls.Config{ServerName: srv.Host, RootCAs: s.RootCAs, MinVersion: tls.VersionTLS12}); err != nil {
		return smtpError(addr, "STARTTLS", err)
	}
	if srv.Username != "" {
		if ok, _ := c.Extension("AUTH"); !ok {
			return &Error{Message: fmt.Sprintf("%s offers no authentication, but a username is set", addr), Permanent: true}
		}
		if err := c.Auth(smtp.PlainAuth("", srv.Username, srv.Password, srv.Host)); err != nil {
			return smtpError(addr, "AUTH", err)
		}
	}
	from := m.From
	if a, err := mail.ParseAddress(m.From); err == nil {
		from = a.Address // the envelope takes the bare address
	}
	if err := c.Mail(from); err != nil {
		return smtpError(addr, "MAIL FROM", err)
	}
	for _, to := range m.To {
		if err := c.Rcpt(to); err != nil {
			return smtpError(addr, "RCPT TO", err)
		}
	}
	w, err := c.Data()
	if err != nil {
		return smtpError(addr, "DATA", err)
	}
	if _, err := w.Write(s.render(m)); err != nil {
		return smtpError(addr, "DATA", err)
	}
	if err := w.Close(); err != nil {
		return smtpError(addr, "DATA", err)
	}
	if err := c.Quit(); err != nil {
		return smtpError(addr, "QUIT", err)
	}
	return nil
}

func (s SMTP) hello() string {
	if s.Hello != "" {
		return s.Hello
	}
	return "localhost"
}

// smtpError names the step; a 5xx reply is permanent.
func smtpError(addr, step string, err error) *Error {
	e := &Error{Message: fmt.Sprintf("%s at %s: %v", step, addr, err)}
	var te *textproto.Error
	if errors.As(err, &te) && te.Code >= 500 {
		e.Permanent = true
	}
	return e
}

// render writes the message: headers with encoded words where needed,
// a quoted-printable UTF-8 text body.
func (s SMTP) render(m Mail) []byte {
	now := time.Now
	if s.Now != nil {
		now = s.Now
	}
	var id [12]byte
	_, _ = rand.Read(id[:])
	domain := "slipway.invalid"
	if a, err := mail.ParseAddress(m.From); err == nil {
		if at := strings.LastIndexByte(a.Address, '@'); at >= 0 {
			domain = a.Address[at+1:]
		}
	}
	var b bytes.Buffer
	header := func(k, v string) { fmt.Fprintf(&b, "%s: %s\r\n", k, v) }
	header("From", m.From)
	header("To", strings.Join(m.To, ", "))
	header("Subject", mime.QEncoding.Encode("utf-8", oneLine(m.Subject)))
	header("Date", now().UTC().Format(time.RFC1123Z))
	header("Message-ID", "<"+hex.EncodeToString(id[:])+"@"+domain+">")
	header("MIME-Version", "1.0")
	header("Content-Type", `text/plain; charset="utf-8"`)
	header("Content-Transfer-Encoding", "quoted-printable")
	header("Auto-Submitted", "auto-generated")
	b.WriteString("\r\n")
	qp := quotedprintable.NewWriter(&b)
	_, _ = qp.Write([]byte(strings.ReplaceAll(strings.ReplaceAll(m.Text, "\r\n", "\n"), "\n", "\r\n")))
	_ = qp.Close()
	return b.Bytes()
}

// oneLine keeps a header on one line: a newline in it would start a header
// of its own.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
