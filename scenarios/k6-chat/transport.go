package chat

// transport.go owns how a client reaches the server beyond plain ws://: the
// TLS settings of a wss:// session (the run's own CA, or no verification when
// the script says so explicitly), permessage-deflate offered and required
// when asked, why a handshake failed, and what each successful one
// negotiated (TLS version, cipher suite, the server's deflate answer), kept
// per process for report().

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"sort"
	"strings"
	"sync"
	"syscall"

	"github.com/gorilla/websocket"
)

// transportOptions are session()'s options about the transport.
type transportOptions struct {
	// tls is the client's TLS configuration for wss:// (nil: Go's defaults,
	// the system's roots).
	tls *tls.Config
	// deflate: offer permessage-deflate and count a handshake whose answer
	// lacks it as a failed connect ("deflate-refused"), so a ws+deflate point
	// never measures uncompressed traffic unseen.
	deflate bool
}

// newTLSConfig trusts the PEM certificates in caFile (the run's certificate,
// self-signed), or skips verification when insecure is set. Both empty: nil.
func newTLSConfig(caFile string, insecure bool) (*tls.Config, error) {
	switch {
	case caFile != "" && insecure:
		return nil, errors.New("chat.session: give caFile or insecureSkipVerify, not both")
	case insecure:
		return &tls.Config{InsecureSkipVerify: true}, nil //nolint:gosec // asked for explicitly
	case caFile == "":
		return nil, nil
	}
	pem, err := os.ReadFile(caFile)
	if err != nil {
		return nil, fmt.Errorf("chat.session: caFile: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("chat.session: caFile %s holds no PEM certificate", caFile)
	}
	return &tls.Config{RootCAs: pool}, nil
}

// The reasons a connect failed, as report()'s connect_error_reasons counts them.
const (
	reasonTLS            = "tls"             // certificate refused, or the TLS handshake failed
	reasonDeflateRefused = "deflate-refused" // deflate asked, the server answered without it
	reasonDeflateParams  = "deflate-params"  // the server's deflate parameters are not the client's
	reasonRefused        = "refused"         // nothing listening
	reasonTimeout        = "timeout"         // no handshake within handshakeTimeout
	reasonHandshake      = "handshake"       // an HTTP answer that is not an upgrade
	reasonPorts          = "ports"           // no local port left on the source address (EADDRNOTAVAIL, EADDRINUSE)
	reasonFiles          = "files"           // k6 itself out of open files (EMFILE, ENFILE)
	reasonOther          = "other"
)

// connectReason classifies a failed dial.
func connectReason(err error, resp *http.Response) string {
	var (
		unknownAuthority x509.UnknownAuthorityError
		hostname         x509.HostnameError
		invalid          x509.CertificateInvalidError
		tlsRecord        tls.RecordHeaderError
		tlsAlert         tls.AlertError
		verify           *tls.CertificateVerificationError
		netErr           net.Error
	)
	switch {
	case errors.Is(err, syscall.EADDRNOTAVAIL), errors.Is(err, syscall.EADDRINUSE):
		return reasonPorts
	case errors.Is(err, syscall.EMFILE), errors.Is(err, syscall.ENFILE):
		return reasonFiles
	case errors.As(err, &unknownAuthority), errors.As(err, &hostname), errors.As(err, &invalid),
		errors.As(err, &tlsRecord), errors.As(err, &tlsAlert), errors.As(err, &verify):
		return reasonTLS
	case strings.Contains(err.Error(), "invalid compression negotiation"):
		return reasonDeflateParams
	case errors.Is(err, websocket.ErrBadHandshake) || resp != nil:
		return reasonHandshake
	case strings.Contains(err.Error(), "connection refused"):
		return reasonRefused
	case errors.As(err, &netErr) && netErr.Timeout():
		return reasonTimeout
	case strings.Contains(err.Error(), "tls:"):
		return reasonTLS
	}
	return reasonOther
}

// negotiation is what one handshake ended with.
type negotiation struct {
	TLSVersion     string `json:"tls_version,omitempty"`
	TLSCipherSuite string `json:"tls_cipher_suite,omitempty"`
	// Deflate is the server's permessage-deflate answer as sent, empty
	// without compression.
	Deflate  string `json:"deflate,omitempty"`
	Sessions int64  `json:"sessions"`
}

// negotiated reads a successful handshake: conn's TLS state and the answer's
// extensions. ok is false when deflate was asked and not granted.
func negotiated(conn *websocket.Conn, resp *http.Response, o transportOptions) (n negotiation, ok bool) {
	if tc, isTLS := conn.UnderlyingConn().(*tls.Conn); isTLS {
		st := tc.ConnectionState()
		n.TLSVersion = tls.VersionName(st.Version)
		n.TLSCipherSuite = tls.CipherSuiteName(st.CipherSuite)
	}
	if resp != nil {
		for _, v := range resp.Header.Values("Sec-WebSocket-Extensions") {
			for _, ext := range strings.Split(v, ",") {
				if strings.TrimSpace(strings.SplitN(ext, ";", 2)[0]) == "permessage-deflate" {
					n.Deflate = strings.TrimSpace(ext)
				}
			}
		}
	}
	return n, !o.deflate || n.Deflate != ""
}

// handshakes counts, per process, each distinct negotiation and each reason
// a connect failed: once per session, never per message.
type handshakes struct {
	mu      sync.Mutex
	byKind  map[negotiation]int64
	reasons map[string]int64
}

func (h *handshakes) succeeded(n negotiation) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.byKind == nil {
		h.byKind = map[negotiation]int64{}
	}
	h.byKind[n]++
}

func (h *handshakes) failed(reason string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.reasons == nil {
		h.reasons = map[string]int64{}
	}
	h.reasons[reason]++
}

// report is every negotiation with its sessions, most sessions first, and
// the failed connects by reason.
func (h *handshakes) report() ([]negotiation, map[string]int64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	kinds := make([]negotiation, 0, len(h.byKind))
	for n, count := range h.byKind {
		n.Sessions = count
		kinds = append(kinds, n)
	}
	sort.Slice(kinds, func(i, j int) bool {
		if kinds[i].Sessions != kinds[j].Sessions {
			return kinds[i].Sessions > kinds[j].Sessions
		}
		return fmt.Sprint(kinds[i]) < fmt.Sprint(kinds[j])
	})
	reasons := make(map[string]int64, len(h.reasons))
	for r, count := range h.reasons {
		reasons[r] = count
	}
	return kinds, reasons
}
