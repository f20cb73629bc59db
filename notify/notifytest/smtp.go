package notifytest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"io"
	"math/big"
	"net"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"
)

// Mail is one message the SMTP server accepted.
type Mail struct {
	From string
	To   []string
	Data []byte
	// TLS says the session had upgraded with STARTTLS before MAIL FROM;
	// User is who logged in.
	TLS  bool
	User string
}

// SMTPServer is a local SMTP server with STARTTLS and PLAIN login.
type SMTPServer struct {
	Host    string
	Port    int
	RootCAs *x509.CertPool
	// User and Password are the login it accepts.
	User, Password string

	mu    sync.Mutex
	mails []Mail
	got   chan struct{}
}

// NewSMTPServer starts a server on 127.0.0.1 accepting user/password,
// offering STARTTLS with a certificate for "localhost" and 127.0.0.1.
func NewSMTPServer(t testing.TB, user, password string) *SMTPServer {
	t.Helper()
	cert, pool := selfSigned(t)
	s := &SMTPServer{RootCAs: pool, User: user, Password: password, got: make(chan struct{}, 100)}
	srv := smtp.NewServer(smtp.BackendFunc(func(c *smtp.Conn) (smtp.Session, error) {
		return &session{srv: s, conn: c}, nil
	}))
	srv.Domain = "localhost"
	srv.TLSConfig = &tls.Config{Certificates: []tls.Certificate{cert}}
	srv.ReadTimeout, srv.WriteTimeout = 30*time.Second, 30*time.Second
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("smtp listen: %v", err)
	}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	host, port, _ := net.SplitHostPort(ln.Addr().String())
	s.Host = host
	s.Port, _ = strconv.Atoi(port)
	return s
}

// Mails returns what was accepted so far.
func (s *SMTPServer) Mails() []Mail {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Mail(nil), s.mails...)
}

// Wait waits for n mails, failing the test after timeout.
func (s *SMTPServer) Wait(t testing.TB, n int, timeout time.Duration) []Mail {
	t.Helper()
	deadline := time.After(timeout)
	for {
		if got := s.Mails(); len(got) >= n {
			return got
		}
		select {
		case <-s.got:
		case <-deadline:
			t.Fatalf("smtp server got %d mails, want %d", len(s.Mails()), n)
		}
	}
}

type session struct {
	srv  *SMTPServer
	conn *smtp.Conn
	user string
	mail Mail
}

func (s *session) AuthMechanisms() []string { return []string{sasl.Plain} }

func (s *session) Auth(string) (sasl.Server, error) {
	return sasl.NewPlainServer(func(_, user, password string) error {
		if user != s.srv.User || password != s.srv.Password {
			return errors.New("invalid credentials")
		}
		s.user = user
		return nil
	}), nil
}

func (s *session) Mail(from string, _ *smtp.MailOptions) error {
	if s.srv.User != "" && s.user == "" {
		return &smtp.SMTPError{Code: 530, Message: "authentication required"}
	}
	_, isTLS := s.conn.TLSConnectionState()
	s.mail = Mail{From: from, TLS: isTLS, User: s.user}
	return nil
}

func (s *session) Rcpt(to string, _ *smtp.RcptOptions) error {
	s.mail.To = append(s.mail.To, to)
	return nil
}

func (s *session) Data(r io.Reader) error {
	b, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	s.mail.Data = b
	s.srv.mu.Lock()
	s.srv.mails = append(s.srv.mails, s.mail)
	s.srv.mu.Unlock()
	s.srv.got <- struct{}{}
	return nil
}

func (s *session) Reset()        { s.mail = Mail{} }
func (s *session) Logout() error { return nil }

// selfSigned makes a certificate for localhost and 127.0.0.1 and the pool
// that trusts it.
func selfSigned(t testing.TB) (tls.Certificate, *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "localhost"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		DNSNames: []string{"localhost"}, IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IsCA: true, BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	leaf, _ := x509.ParseCertificate(der)
	pool := x509.NewCertPool()
	pool.AddCert(leaf)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}, pool
}
