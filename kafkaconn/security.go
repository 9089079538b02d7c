package kafkaconn

import (
	"crypto/tls"
	"time"

	"github.com/segmentio/kafka-go"
	"github.com/segmentio/kafka-go/sasl"
)

// DialTimeout bounds the opening of one connection.
const DialTimeout = 10 * time.Second

// Security is how connections to Kafka are encrypted and authenticated. The zero value is
// PLAINTEXT; TLS alone is SSL; SASL alone is SASL_PLAINTEXT; both are SASL_SSL.
type Security struct {
	TLS  *tls.Config    // nil: no TLS
	SASL sasl.Mechanism // nil: no SASL; plain.Mechanism or a scram mechanism
}

// Dialer is the dialer of a reader (kafka.ReaderConfig.Dialer).
func (s Security) Dialer() *kafka.Dialer {
	return &kafka.Dialer{Timeout: DialTimeout, DualStack: true, TLS: s.TLS, SASLMechanism: s.SASL}
}

// Transport is the transport of a writer or a client, with connections of its own: close them
// with CloseIdleConnections.
func (s Security) Transport() *kafka.Transport {
	return &kafka.Transport{TLS: s.TLS, SASL: s.SASL, DialTimeout: DialTimeout}
}

// Client returns a Kafka client with its own connections, closed by done: a client on kafka-go's
// shared default transport would keep connections and goroutines after every call.
func (s Security) Client(brokers []string, timeout time.Duration) (c *kafka.Client, done func()) {
	t := s.Transport()
	return &kafka.Client{Addr: kafka.TCP(brokers...), Timeout: timeout, Transport: t}, t.CloseIdleConnections
}
