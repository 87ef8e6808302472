// listen.go owns the Go servers' listener: the TCP socket, with TLS on it
// when the server is given a certificate and key (-tls-cert, -tls-key), and
// the checks that refuse a certificate the server should not serve.
//
// TLS is crypto/tls's own listener (tls.NewListener, as net/http's ServeTLS
// and Fiber's ListenTLS use), and sits under BatchListener: a connection's
// batch of frames goes to the TLS layer with one write and leaves as one or
// two records, and BatchConn counts the frame bytes before encryption.
package chat

import (
	"crypto/tls"
	"fmt"
	"net"
	"time"
)

// Listen binds addr. With certFile and keyFile both set it serves TLS only,
// with that key pair; with neither, plain TCP. One without the other, or a
// pair LoadTLS refuses, is an error and nothing is bound.
func Listen(addr, certFile, keyFile string) (net.Listener, error) {
	var config *tls.Config
	if certFile != "" || keyFile != "" {
		var err error
		if config, err = LoadTLS(certFile, keyFile, time.Now()); err != nil {
			return nil, err
		}
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	if config != nil {
		ln = tls.NewListener(ln, config)
	}
	return ln, nil
}

// LoadTLS reads a PEM certificate (chain) and its private key into a server
// configuration. It refuses a missing file, a key that is not the
// certificate's, and a certificate that is not valid at now.
func LoadTLS(certFile, keyFile string, now time.Time) (*tls.Config, error) {
	if certFile == "" || keyFile == "" {
		return nil, fmt.Errorf("TLS needs both -tls-cert and -tls-key (got cert %q, key %q)", certFile, keyFile)
	}
	pair, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, fmt.Errorf("TLS certificate %s with key %s: %w", certFile, keyFile, err)
	}
	leaf := pair.Leaf // parsed by LoadX509KeyPair since Go 1.23
	if now.After(leaf.NotAfter) {
		return nil, fmt.Errorf("TLS certificate %s expired at %s", certFile, leaf.NotAfter.UTC().Format(time.RFC3339))
	}
	if now.Before(leaf.NotBefore) {
		return nil, fmt.Errorf("TLS certificate %s is not valid before %s", certFile, leaf.NotBefore.UTC().Format(time.RFC3339))
	}
	return &tls.Config{
		Certificates: []tls.Certificate{pair},
		// WebSocket upgrades are HTTP/1.1 requests.
		NextProtos: []string{"http/1.1"},
	}, nil
}
