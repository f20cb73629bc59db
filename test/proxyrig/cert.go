package proxyrig

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"time"
)

// Certificate is a self-signed ECDSA P-256 certificate written as
// dir/NAME.crt and dir/NAME.key, the layout the gateway's certificate
// directory (SLIPWAY_GATEWAY_CERT_DIR) reads and nginx takes as is.
type Certificate struct {
	Dir, CertFile, KeyFile string
	// Pool trusts the certificate, for clients.
	Pool *x509.CertPool
}

// WriteCertificate creates the certificate for names (wildcards allowed)
// in dir, which should hold nothing else the gateway would load.
func WriteCertificate(dir, name string, names ...string) (Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return Certificate{}, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		return Certificate{}, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: names[0]},
		DNSNames:              names,
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return Certificate{}, err
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return Certificate{}, err
	}
	c := Certificate{Dir: dir, CertFile: filepath.Join(dir, name+".crt"), KeyFile: filepath.Join(dir, name+".key"), Pool: x509.NewCertPool()}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return Certificate{}, err
	}
	if err := os.WriteFile(c.CertFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644); err != nil {
		return Certificate{}, err
	}
	if err := os.WriteFile(c.KeyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		return Certificate{}, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return Certificate{}, fmt.Errorf("parse the certificate just made: %w", err)
	}
	c.Pool.AddCert(cert)
	return c, nil
}

// ClientConfig is a TLS 1.3 client configuration trusting c, for
// serverName, offering the ALPN protocols given.
func (c Certificate) ClientConfig(serverName string, protos ...string) *tls.Config {
	return &tls.Config{RootCAs: c.Pool, ServerName: serverName, NextProtos: protos, MinVersion: tls.VersionTLS13}
}
