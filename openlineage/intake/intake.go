package intake

import (
	"compress/gzip"
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/segmentio/kafka-go"

	"github.com/colline/colline/openlineage"
	"github.com/colline/colline/process"
)

// Path is where the endpoint is served, as Marquez serves it.
const Path = "/api/v1/lineage"

// DefaultMaxBytes is the default largest request body: 4 MiB, well above the largest event of the
// captured TPC-DS corpus (about 200 KB) and below the topic's max.message.bytes.
const DefaultMaxBytes = 4 << 20

// DefaultPublishTimeout bounds the wait for Kafka's acknowledgement before answering 503.
const DefaultPublishTimeout = 10 * time.Second

// publisher is satisfied by *ingest.Producer on the OpenLineage topic.
type publisher interface {
	WriteMessages(ctx context.Context, msgs ...kafka.Message) error
}

// Handler serves Path.
type Handler struct {
	Step           Step          // Required: the consumer's step (its Validator, Names, limits).
	Publisher      publisher     // Required: a producer on the OpenLineage topic.
	APIKey         string        // Required bearer token when not empty.
	MaxBytes       int64         // Largest body, decoded. Default: DefaultMaxBytes.
	PublishTimeout time.Duration // Default: DefaultPublishTimeout.
	Metrics        *Metrics      // Default: NewMetrics(nil), not registered.
	Logger         *slog.Logger  // Default: discard.
}

// Results of a request, the result label of colline_openlineage_http_requests_total.
const (
	ResultAccepted     = "accepted"     // 201: published to the topic
	ResultInvalid      = "invalid"      // 400: the event would be dead-lettered
	ResultUnauthorized = "unauthorized" // 401
	ResultMethod       = "method"       // 405
	ResultTooLarge     = "too_large"    // 413
	ResultMediaType    = "media_type"   // 415
	ResultUnavailable  = "unavailable"  // 503: Kafka did not take it
)

// Metrics are the endpoint's Prometheus metrics.
type Metrics struct {
	requests *prometheus.CounterVec
	duration prometheus.Histogram
}

// NewMetrics creates the endpoint's metrics and registers them on reg (nil: not registered).
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "colline", Subsystem: "openlineage", Name: "http_requests_total",
			Help: "Requests to POST /api/v1/lineage, by result: accepted (201), invalid (400), unauthorized (401), method (405), too_large (413), media_type (415), unavailable (503)."},
			[]string{"result"}),
		duration: prometheus.NewHistogram(prometheus.HistogramOpts{Namespace: "colline", Subsystem: "openlineage", Name: "http_request_duration_seconds",
			Help:    "Time to answer a request to POST /api/v1/lineage, the Kafka acknowledgement included.",
			Buckets: prometheus.DefBuckets}),
	}
	for _, r := range []string{ResultAccepted, ResultInvalid, ResultUnauthorized, ResultMethod, ResultTooLarge, ResultMediaType, ResultUnavailable} {
		m.requests.WithLabelValues(r)
	}
	if reg != nil {
		reg.MustRegister(m.requests, m.duration)
	}
	return m
}

// Error is the body of an error answer, in Dropwizard's shape (Marquez's): code and message,
// plus the dead-letter reason for an invalid event.
type Error struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Reason  string `json:"reason,omitempty"`
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	m := h.Metrics
	if m == nil {
		m = NewMetrics(nil)
	}
	log := h.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	result := h.serve(w, r, log)
	m.requests.WithLabelValues(result).Inc()
	m.duration.Observe(time.Since(start).Seconds())
}

func (h *Handler) serve(w http.ResponseWriter, r *http.Request, log *slog.Logger) string {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		answer(w, http.StatusMethodNotAllowed, "only POST is served here", "")
		return ResultMethod
	}
	if h.APIKey != "" && !authorized(r.Header.Get("Authorization"), h.APIKey) {
		w.Header().Set("WWW-Authenticate", `Bearer realm="colline"`)
		answer(w, http.StatusUnauthorized, "a valid Authorization: Bearer <api key> header is required", "")
		return ResultUnauthorized
	}
	if ct := r.Header.Get("Content-Type"); ct != "" {
		if mt, _, err := mime.ParseMediaType(ct); err != nil || (mt != "application/json" && !strings.HasSuffix(mt, "+json")) {
			answer(w, http.StatusUnsupportedMediaType, fmt.Sprintf("Content-Type %q: want application/json", ct), "")
			return ResultMediaType
		}
	}
	limit := h.MaxBytes
	if limit <= 0 {
		limit = DefaultMaxBytes
	}
	body, err := readBody(w, r, limit)
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			answer(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("the event is larger than %d bytes (COLLINE_OPENLINEAGE_HTTP_MAX_BYTES)", limit), process.ReasonTooLarge)
			return ResultTooLarge
		}
		answer(w, http.StatusBadRequest, "reading the body: "+err.Error(), process.ReasonInvalidJSON)
		return ResultInvalid
	}
	if _, err := h.Step.Item(body); err != nil {
		reason := process.Reason(err)
		log.Info("openlineage event refused", "reason", reason, "err", err, "remote", r.RemoteAddr)
		answer(w, http.StatusBadRequest, err.Error(), reason)
		return ResultInvalid
	}
	e, err := openlineage.Decode(body) // validated above; for the message key
	if err != nil {
		answer(w, http.StatusBadRequest, err.Error(), process.Reason(err))
		return ResultInvalid
	}
	timeout := h.PublishTimeout
	if timeout <= 0 {
		timeout = DefaultPublishTimeout
	}
	ctx, cancel := context.WithTimeout(r.Context(), timeout)
	defer cancel()
	msg := kafka.Message{Key: []byte(openlineage.MessageKey(e)), Value: body}
	if err := h.Publisher.WriteMessages(ctx, msg); err != nil {
		log.Warn("openlineage event not published; the client will retry", "err", err)
		w.Header().Set("Retry-After", "5")
		answer(w, http.StatusServiceUnavailable, "the event could not be stored now; retry", "")
		return ResultUnavailable
	}
	w.WriteHeader(http.StatusCreated)
	return ResultAccepted
}

// readBody reads the request body, gunzipped when it says so, up to limit bytes.
func readBody(w http.ResponseWriter, r *http.Request, limit int64) ([]byte, error) {
	var body io.Reader = http.MaxBytesReader(w, r.Body, limit)
	switch enc := strings.ToLower(strings.TrimSpace(r.Header.Get("Content-Encoding"))); enc {
	case "", "identity":
	case "gzip":
		zr, err := gzip.NewReader(body)
		if err != nil {
			return nil, fmt.Errorf("gzip: %w", err)
		}
		defer zr.Close()
		// the cap holds for the decoded event too: a small bomb must not fill the memory
		body = io.LimitReader(zr, limit+1)
		b, err := io.ReadAll(body)
		if err != nil {
			return nil, fmt.Errorf("gzip: %w", err)
		}
		if int64(len(b)) > limit {
			return nil, &http.MaxBytesError{Limit: limit}
		}
		return b, nil
	default:
		return nil, fmt.Errorf("Content-Encoding %q is not gzip", enc)
	}
	return io.ReadAll(body)
}

// authorized compares a bearer token with the key in constant time.
func authorized(header, key string) bool {
	token, ok := strings.CutPrefix(header, "Bearer ")
	return ok && subtle.ConstantTimeCompare([]byte(strings.TrimSpace(token)), []byte(key)) == 1
}

func answer(w http.ResponseWriter, code int, message, reason string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(Error{Code: code, Message: message, Reason: reason})
}

// Server returns an HTTP server of the endpoint on addr, with timeouts against slow clients.
func Server(addr string, h http.Handler) *http.Server {
	mux := http.NewServeMux()
	mux.Handle(Path, h)
	return &http.Server{Addr: addr, Handler: mux, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: time.Minute,
		WriteTimeout: time.Minute, IdleTimeout: 2 * time.Minute, MaxHeaderBytes: 64 << 10}
}
