package ingest

import (
	"errors"
	"strconv"
	"strings"

	"github.com/segmentio/kafka-go"
)

// Headers of a dead-letter message, added to the original message's headers.
const (
	HeaderReason          = "colline.reason"           // one of the process.Reason* values
	HeaderError           = "colline.error"            // the error text, cut at maxErrorHeader bytes
	HeaderSourceTopic     = "colline.source.topic"     // where the message came from
	HeaderSourcePartition = "colline.source.partition" // decimal
	HeaderSourceOffset    = "colline.source.offset"    // decimal
	HeaderConsumerVersion = "colline.consumer.version" // the consumer build that rejected it
	HeaderValueOmitted    = "colline.value.omitted"    // set when the value was too large to republish
)

const maxErrorHeader = 4096

// HeaderPrefix starts the name of every header colline sets. An original message's own headers of
// that prefix (any case) are kept renamed with IncomingPrefix in front (colline.reason becomes
// incoming.colline.reason), so that a producer cannot forge a dead letter's reason or source, and
// a dead letter replayed onto the topic and refused again keeps its first headers apart.
const (
	HeaderPrefix   = "colline."
	IncomingPrefix = "incoming."
)

// deadLetter is a message that cannot be written, with why.
type deadLetter struct {
	msg    kafka.Message
	reason string
	err    error
}

// message builds the dead-letter message: the original key, value and headers (those named
// colline.* renamed, see HeaderPrefix), then the colline.* headers, each once. The topic is left
// to the producer. The value is the original bytes, also for an event the graph rejected at write
// time (write_rejected, invalid_lineage).
func (d deadLetter) message(version string) kafka.Message {
	text := d.err.Error()
	if len(text) > maxErrorHeader {
		text = text[:maxErrorHeader]
	}
	h := make([]kafka.Header, 0, len(d.msg.Headers)+6)
	for _, x := range d.msg.Headers {
		if strings.HasPrefix(strings.ToLower(x.Key), HeaderPrefix) {
			x.Key = IncomingPrefix + x.Key
		}
		h = append(h, x)
	}
	h = append(h,
		kafka.Header{Key: HeaderReason, Value: []byte(d.reason)},
		kafka.Header{Key: HeaderError, Value: []byte(text)},
		kafka.Header{Key: HeaderSourceTopic, Value: []byte(d.msg.Topic)},
		kafka.Header{Key: HeaderSourcePartition, Value: []byte(strconv.Itoa(d.msg.Partition))},
		kafka.Header{Key: HeaderSourceOffset, Value: []byte(strconv.FormatInt(d.msg.Offset, 10))},
		kafka.Header{Key: HeaderConsumerVersion, Value: []byte(version)},
	)
	return kafka.Message{Key: d.msg.Key, Value: d.msg.Value, Headers: h}
}

// withoutValue is m with its value dropped and HeaderValueOmitted set, for a message the
// dead-letter topic refuses as too large: the headers still say where the original is.
func withoutValue(m kafka.Message) kafka.Message {
	m.Value = nil
	m.Headers = append(m.Headers[:len(m.Headers):len(m.Headers)], kafka.Header{Key: HeaderValueOmitted, Value: []byte("too_large")})
	return m
}

// tooLarge reports whether a produce error says the message is too large.
func tooLarge(err error) bool {
	var mtl kafka.MessageTooLargeError
	return errors.As(err, &mtl) || errors.Is(err, kafka.MessageSizeTooLarge)
}
