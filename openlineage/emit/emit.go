package emit

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/segmentio/kafka-go"

	"github.com/colline/colline/openlineage"
	"github.com/colline/colline/record"
	"github.com/colline/colline/tags"
)

// Event is one OpenLineage event to send: its JSON and its Kafka key (openlineage.MessageKey).
type Event struct {
	Key, Value []byte
}

// Sink sends events in order. It returns, per event, whether the receiver refused it for good
// (rejected, with why); an error means a later attempt may succeed, and the caller sends again.
type Sink interface {
	Send(ctx context.Context, events []Event) (rejected []error, err error)
}

// Results of an emitted event, the result label of colline_openlineage_emitted_total.
const (
	ResultOK       = "ok"
	ResultRejected = "rejected"
)

// Metrics are the emitter's Prometheus metrics.
type Metrics struct {
	emitted *prometheus.CounterVec
}

// NewMetrics creates the emitter's metrics and registers them on reg (nil: not registered).
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{emitted: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "colline", Subsystem: "openlineage", Name: "emitted_total",
		Help: "OpenLineage events emitted for written listener events, by result: ok (the sink took it) or rejected (the sink refused it for good; not retried)."},
		[]string{"result"})}
	m.emitted.WithLabelValues(ResultOK)
	m.emitted.WithLabelValues(ResultRejected)
	if reg != nil {
		reg.MustRegister(m.emitted)
	}
	return m
}

// Emitter turns written items into OpenLineage events and sends them. It satisfies the loop's
// emitter seam (ingest.Params.Emitter).
type Emitter struct {
	Sink    Sink         // Required.
	Metrics *Metrics     // Default: NewMetrics(nil), not registered.
	Logger  *slog.Logger // Default: discard.
	// Tags, when set, is where the tags of the written columns are read (graph.Reader.Tags):
	// each output carries the tags its columns carry unmasked, as a tags facet (docs/tags.md).
	// A failed read fails Emit (the loop retries it).
	Tags tags.Graph
}

// Emit sends the events of the listener items (OpenLineage items are not emitted again: they
// came from an OpenLineage producer).
func (e *Emitter) Emit(ctx context.Context, items []record.Item) error {
	m, log := e.Metrics, e.Logger
	if m == nil {
		m = NewMetrics(nil)
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	carried, err := e.tagsOf(ctx, items)
	if err != nil {
		return err
	}
	var evs []Event
	for _, it := range items {
		if it.Event == nil || it.Lineage == nil {
			continue
		}
		data, err := openlineage.FromSparkTagged(it.Event, it.Lineage, carried)
		if err != nil { // record.Check passed, so this is a bug: say so, do not stop the lineage
			m.emitted.WithLabelValues(ResultRejected).Inc()
			log.Error("no OpenLineage event for a written event", "event", it.ID(), "err", err)
			continue
		}
		decoded, err := openlineage.Decode(data)
		key := ""
		if err == nil {
			key = openlineage.MessageKey(decoded)
		}
		evs = append(evs, Event{Key: []byte(key), Value: data})
	}
	if len(evs) == 0 {
		return nil
	}
	rejected, err := e.Sink.Send(ctx, evs)
	if err != nil {
		return fmt.Errorf("emit %d OpenLineage events: %w", len(evs), err)
	}
	n := 0
	for _, r := range rejected {
		if r != nil {
			n++
			log.Warn("OpenLineage event refused by the sink; not retried", "err", r)
		}
	}
	m.emitted.WithLabelValues(ResultRejected).Add(float64(n))
	m.emitted.WithLabelValues(ResultOK).Add(float64(len(evs) - n))
	return nil
}

// tagsOf returns the tags the written columns of listener items carry unmasked (nil without
// Tags), by column key: one walk up for all of them.
func (e *Emitter) tagsOf(ctx context.Context, items []record.Item) (map[string][]openlineage.TagField, error) {
	if e.Tags == nil {
		return nil, nil
	}
	var keys []string
	for _, it := range items {
		if it.Event == nil || it.Lineage == nil {
			continue
		}
		for _, w := range it.Lineage.Writes {
			for _, c := range w.Columns {
				keys = append(keys, c.Key)
			}
		}
	}
	cts, err := tags.Of(ctx, e.Tags, keys, tags.Limits{})
	if err != nil {
		return nil, fmt.Errorf("emit: the tags of %d written columns: %w", len(keys), err)
	}
	out := map[string][]openlineage.TagField{}
	for _, ct := range cts {
		for _, c := range ct.Tags {
			if c.Status != tags.Unmasked {
				continue
			}
			t := openlineage.TagField{Key: c.Tag.Key, Value: c.Tag.Value, Source: c.Tag.Source}
			if !slices.Contains(out[ct.Column], t) {
				out[ct.Column] = append(out[ct.Column], t)
			}
		}
	}
	return out, nil
}

// DefaultTimeout is the default timeout of one HTTP request.
const DefaultTimeout = 10 * time.Second

// HTTP posts each event to URL (the full endpoint, http://marquez:5000/api/v1/lineage), with
// "Authorization: Bearer APIKey" when APIKey is set, as openlineage's HTTP transport does.
type HTTP struct {
	URL     string
	APIKey  string
	Timeout time.Duration // per request. Default: DefaultTimeout.
	Client  *http.Client  // Default: a client of its own with Timeout.
}

// Send implements Sink.
func (h *HTTP) Send(ctx context.Context, events []Event) ([]error, error) {
	c := h.Client
	if c == nil {
		t := h.Timeout
		if t <= 0 {
			t = DefaultTimeout
		}
		c = &http.Client{Timeout: t}
		h.Client = c
	}
	rejected := make([]error, len(events))
	for i, ev := range events {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, h.URL, bytes.NewReader(ev.Value))
		if err != nil {
			return nil, err
		}
		req.Header.Set("Content-Type", "application/json")
		if h.APIKey != "" {
			req.Header.Set("Authorization", "Bearer "+h.APIKey)
		}
		resp, err := c.Do(req)
		if err != nil {
			return nil, fmt.Errorf("POST %s: %w", h.URL, err)
		}
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 1024))
		resp.Body.Close()
		switch code := resp.StatusCode; {
		case code >= 200 && code < 300:
		case code == http.StatusRequestTimeout || code == http.StatusTooManyRequests || code >= 500:
			return nil, fmt.Errorf("POST %s: %s: %s", h.URL, resp.Status, bytes.TrimSpace(body))
		default:
			rejected[i] = fmt.Errorf("POST %s: %s: %s", h.URL, resp.Status, bytes.TrimSpace(body))
		}
	}
	return rejected, nil
}

// publisher is satisfied by *ingest.Producer on the topic to emit to.
type publisher interface {
	WriteMessages(ctx context.Context, msgs ...kafka.Message) error
}

// Kafka writes the events to a topic, keyed as openlineage's Kafka transport keys them.
type Kafka struct {
	Publisher publisher
}

// Send implements Sink. A message the topic refuses as too large is rejected; any other error
// is returned.
func (k *Kafka) Send(ctx context.Context, events []Event) ([]error, error) {
	rejected := make([]error, len(events))
	for i, ev := range events {
		err := k.Publisher.WriteMessages(ctx, kafka.Message{Key: ev.Key, Value: ev.Value})
		var mtl kafka.MessageTooLargeError
		switch {
		case err == nil:
		case errors.As(err, &mtl) || errors.Is(err, kafka.MessageSizeTooLarge):
			rejected[i] = err
		default:
			return nil, err
		}
	}
	return rejected, nil
}
