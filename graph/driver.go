package graph

import (
	"crypto/tls"
	"fmt"
	"net/url"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"
	"github.com/neo4j/neo4j-go-driver/v5/neo4j/config"
)

// NewDriver returns a Neo4j driver for uri (bolt://, neo4j://, and their +s/+ssc forms). An empty
// user means no authentication. tlsConfig, at most one, sets the trusted CAs of a +s URI (the
// driver derives whether to encrypt and what name to verify from the URI). It does not connect;
// Ping, Bootstrap and Write do.
func NewDriver(uri, user, password string, tlsConfig ...*tls.Config) (neo4j.DriverWithContext, error) {
	auth := neo4j.NoAuth()
	if user != "" {
		auth = neo4j.BasicAuth(user, password, "")
	}
	d, err := neo4j.NewDriverWithContext(uri, auth, func(c *config.Config) {
		c.MaxConnectionPoolSize = 8
		c.MaxTransactionRetryTime = 15 * time.Second
		c.ConnectionAcquisitionTimeout = 30 * time.Second
		c.SocketConnectTimeout = 5 * time.Second
		if len(tlsConfig) > 0 && tlsConfig[0] != nil {
			c.TlsConfig = tlsConfig[0]
		}
	})
	if err != nil {
		return nil, fmt.Errorf("neo4j driver for %s: %w", redact(uri), err)
	}
	return d, nil
}

// redact hides a password written into a URI.
func redact(uri string) string {
	u, err := url.Parse(uri)
	if err != nil {
		return "(unparseable URI)"
	}
	return u.Redacted()
}
