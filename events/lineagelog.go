package events

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"time"

	"github.com/go-json-experiment/json/jsontext"
)

// LineageLogOptions complete what a LineageLogger record does not say.
type LineageLogOptions struct {
	// Time stamps a record without a timestamp (LineageLogger omits it when hive.in.test=true);
	// zero: such a record is invalid.
	Time time.Time
	// Namespace is the job namespace (app.namespace); default "default", the hook's default.
	Namespace string
}

var lineageLogKeys = []string{"version", "user", "timestamp", "duration", "jobIds", "engine", "database", "hash", "queryText", "edges", "vertices"}

// IsLineageLog reports whether data is an object with LineageLogger's edges and vertices and
// no schemaVersion: a record of Hive's LineageLogger hook rather than a colline event.
func IsLineageLog(data []byte) bool {
	if bytes.HasPrefix(bytes.TrimLeft(data, " \t\r\n"), []byte(`{"schemaVersion"`)) {
		return false // a colline event, as the listener writes them: no decoder needed to tell
	}
	dec := jsontext.NewDecoder(bytes.NewBuffer(data))
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '{' {
		return false
	}
	var edges, vertices bool
	for dec.PeekKind() == '"' {
		name, err := dec.ReadToken()
		if err != nil {
			return false
		}
		switch name.String() {
		case "schemaVersion":
			return false
		case "edges":
			edges = true
		case "vertices":
			vertices = true
		}
		if dec.SkipValue() != nil {
			return false
		}
	}
	return edges && vertices
}

// DecodeLineageLog reads one record of Hive's LineageLogger (format 1.x: version, user,
// timestamp, duration, jobIds, engine, database, hash, queryText, edges, vertices) into a Hive
// event, as strictly as Decode reads a colline event. The event id is derived from the record's
// bytes, so replaying the same record twice writes the same run; the job is named as the hook
// names it ("hive." + the db.table of the first target column, docs/hive.md); the operation comes
// from the query text (CREATE TABLE … AS, CREATE VIEW, ALTER VIEW, else QUERY). The record says
// nothing of the tables' locations or write modes.
func DecodeLineageLog(data []byte, opt LineageLogOptions) (*Envelope, error) {
	if len(data) == 0 {
		return nil, fmt.Errorf("%w: empty message", ErrInvalidJSON)
	}
	d := newDecoder(data)
	h := new(Hive)
	var version, user string
	var ts, duration int64 = -1, -1
	if d.dec.PeekKind() != '{' {
		if d.dec.PeekKind() == 0 {
			_, err := d.dec.ReadToken()
			return nil, d.wrap(err)
		}
		return nil, d.wrap(d.wrongKind("an object"))
	}
	err := d.object(lineageLogKeys, func(key []byte) (int, error) {
		switch string(key) {
		case "version":
			return 0, d.string(&version, false)
		case "user":
			return 1, d.string(&user, false)
		case "timestamp":
			return 2, d.int64(&ts, 64)
		case "duration":
			return 3, d.int64(&duration, 64)
		case "jobIds":
			var ids []string
			return 4, d.strings(&ids)
		case "engine":
			return 5, d.string(&h.Engine, true)
		case "database":
			return 6, d.string(&h.Database, true)
		case "hash":
			return 7, d.string(&h.Hash, false)
		case "queryText":
			return 8, d.string(&h.QueryText, false)
		case "edges":
			_, err := d.array(func() error {
				h.Edges = append(h.Edges, HiveEdge{})
				return d.hiveEdge(&h.Edges[len(h.Edges)-1])
			})
			return 9, err
		case "vertices":
			_, err := d.array(func() error {
				h.Vertices = append(h.Vertices, HiveVertex{})
				return d.hiveVertex(&h.Vertices[len(h.Vertices)-1])
			})
			return 10, err
		}
		return unknownKey, nil
	})
	if err == nil {
		end := int(d.dec.InputOffset())
		if rest := bytes.TrimLeft(data[end:], " \t\r\n"); len(rest) > 0 {
			err = fmt.Errorf("%w at byte %d of %d: %q after the record", ErrInvalidJSON, len(data)-len(rest), len(data), rest[:min(len(rest), 8)])
		}
	}
	if err != nil {
		return nil, d.wrap(err)
	}
	if major, _, _ := strings.Cut(version, "."); major != "1" {
		return nil, fmt.Errorf("%w: LineageLogger record version %q, this consumer reads 1.x", ErrUnsupportedVersion, version)
	}
	var end time.Time
	switch {
	case ts >= 0:
		end = time.Unix(ts, 0).UTC()
		if duration > 0 {
			end = end.Add(time.Duration(duration) * time.Millisecond)
		}
	case !opt.Time.IsZero():
		end = opt.Time.UTC()
	default:
		return nil, fmt.Errorf("%w: LineageLogger record without a timestamp (hive.in.test=true omits it) and no time to stamp it with", ErrInvalid)
	}
	sum := sha256.Sum256(data)
	id := hex.EncodeToString(sum[:16])
	h.Operation = operation(h.QueryText)
	ns := opt.Namespace
	if ns == "" {
		ns = "default"
	}
	env := &Envelope{
		SchemaVersion: "1.4",
		EventID:       id[:8] + "-" + id[8:12] + "-" + id[12:16] + "-" + id[16:20] + "-" + id[20:],
		EmittedAt:     end.Format(time.RFC3339Nano),
		Producer:      Producer{Name: "hive-lineage-logger", Version: version},
		App:           App{Name: HiveJobName(h), User: user, Namespace: ns},
		Query:         Query{FuncName: h.Operation, Status: "success", DurationMs: max(duration, 0), EndedAt: end.Format(time.RFC3339Nano)},
		Nodes:         []Node{},
		Hive:          h,
	}
	if err := env.Validate(); err != nil {
		return nil, err
	}
	return env, nil
}

// HiveJobName is the job name the hook gives a query when none is set (colline.job.name,
// hive.query.name): "hive." + the db.table of Hive's vertex 0 (the first target column) when it
// names one, else "hive".
func HiveJobName(h *Hive) string {
	if len(h.Vertices) > 0 {
		label := h.Vertices[0].VertexID
		if a := strings.IndexByte(label, '.'); a > 0 {
			if b := strings.IndexByte(label[a+1:], '.'); b > 0 {
				return "hive." + strings.ToLower(label[:a+1+b])
			}
		}
	}
	return "hive"
}

// operation is Hive's name of the operation a logged query text is: LineageLogger logs
// QUERY, CREATETABLE_AS_SELECT, CREATEVIEW and ALTERVIEW_AS.
func operation(text string) string {
	f := strings.Fields(strings.ToLower(text))
	at := func(i int) string {
		if i < len(f) {
			return f[i]
		}
		return ""
	}
	switch {
	case at(0) == "create" && (at(1) == "view" || at(3) == "view" || at(1) == "materialized"):
		return "CREATEVIEW"
	case at(0) == "create":
		return "CREATETABLE_AS_SELECT"
	case at(0) == "alter" && at(1) == "view":
		return "ALTERVIEW_AS"
	}
	return "QUERY"
}
