package graph

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"syscall"
	"testing"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"
)

// untrusted tells a certificate that does not verify (which Bootstrap reports at once) from the
// failures a retry may fix. The driver's ConnectivityError keeps its cause as text only: its
// message is the one the secured Neo4j gave (e2e/secure TestCLIReplay runs the real path).
func TestUntrusted(t *testing.T) {
	for _, c := range []struct {
		err  error
		want bool
	}{
		{&neo4j.ConnectivityError{Inner: errors.New("tls: failed to verify certificate: x509: certificate signed by unknown authority")}, true},
		{fmt.Errorf("dial: %w", &tls.CertificateVerificationError{Err: x509.UnknownAuthorityError{}}), true},
		{&neo4j.ConnectivityError{Inner: fmt.Errorf("dial tcp 127.0.0.1:7687: %w", syscall.ECONNREFUSED)}, false},
		{&neo4j.Neo4jError{Code: "Neo.ClientError.Security.Unauthorized"}, false},
	} {
		if got := untrusted(c.err); got != c.want {
			t.Errorf("untrusted(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}
