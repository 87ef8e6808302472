package chat

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// writeCert writes a self-signed P-256 certificate for 127.0.0.1, valid from
// notBefore to notAfter, and its key, to dir; it returns both paths.
func writeCert(t *testing.T, dir, name string, notBefore, notAfter time.Time) (certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	template := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "127.0.0.1"},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
		NotBefore:    notBefore,
		NotAfter:     notAfter,
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, template, template, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile = filepath.Join(dir, name+".crt")
	keyFile = filepath.Join(dir, name+".key")
	writePEM(t, certFile, "CERTIFICATE", der)
	writePEM(t, keyFile, "PRIVATE KEY", keyDER)
	return certFile, keyFile
}

func writePEM(t *testing.T, path, kind string, der []byte) {
	t.Helper()
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestListenServesTLSWithTheGivenCertificate(t *testing.T) {
	now := time.Now()
	cert, key := writeCert(t, t.TempDir(), "server", now.Add(-time.Hour), now.Add(time.Hour))
	ln, err := Listen("127.0.0.1:0", cert, key)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		io.Copy(c, c) // echo
	}()
	pool := x509.NewCertPool()
	pem, _ := os.ReadFile(cert)
	pool.AppendCertsFromPEM(pem)
	conn, err := tls.Dial("tcp", ln.Addr().String(), &tls.Config{RootCAs: pool, ServerName: "127.0.0.1", NextProtos: []string{"http/1.1"}})
	if err != nil {
		t.Fatalf("TLS handshake with the server's own certificate: %v", err)
	}
	defer conn.Close()
	conn.Write([]byte("hello"))
	got := make([]byte, 5)
	if _, err := io.ReadFull(conn, got); err != nil || string(got) != "hello" {
		t.Fatalf("echo over TLS: %q, %v", got, err)
	}
	if proto := conn.ConnectionState().NegotiatedProtocol; proto != "http/1.1" {
		t.Fatalf("ALPN: %q, want http/1.1", proto)
	}
}

func TestListenWithoutCertificateServesPlainTCP(t *testing.T) {
	ln, err := Listen("127.0.0.1:0", "", "")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	if _, plain := ln.(*net.TCPListener); !plain {
		t.Fatalf("want a *net.TCPListener, got %T", ln)
	}
}

func TestLoadTLSRefusesBadCertificates(t *testing.T) {
	dir := t.TempDir()
	now := time.Now()
	goodCert, goodKey := writeCert(t, dir, "good", now.Add(-time.Hour), now.Add(time.Hour))
	_, otherKey := writeCert(t, dir, "other", now.Add(-time.Hour), now.Add(time.Hour))
	expiredCert, expiredKey := writeCert(t, dir, "expired", now.Add(-48*time.Hour), now.Add(-24*time.Hour))
	futureCert, futureKey := writeCert(t, dir, "future", now.Add(24*time.Hour), now.Add(48*time.Hour))
	garbage := filepath.Join(dir, "garbage.pem")
	os.WriteFile(garbage, []byte("not a certificate"), 0o600)
	for _, c := range []struct{ name, cert, key, want string }{
		{"a key that is not the certificate's", goodCert, otherKey, "private key does not match public key"},
		{"an expired certificate", expiredCert, expiredKey, "expired at"},
		{"a certificate not yet valid", futureCert, futureKey, "not valid before"},
		{"a file that is no certificate", garbage, goodKey, "failed to find any PEM data"},
		{"a missing file", filepath.Join(dir, "missing.crt"), goodKey, "no such file"},
		{"a certificate without a key", goodCert, "", "needs both"},
	} {
		_, err := LoadTLS(c.cert, c.key, now)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want an error containing %q", c.name, err, c.want)
		}
		if ln, err := Listen("127.0.0.1:0", c.cert, c.key); err == nil {
			ln.Close()
			t.Errorf("%s: Listen served it", c.name)
		}
	}
}
