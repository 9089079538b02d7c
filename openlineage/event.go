package openlineage

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Kind is the kind of an OpenLineage event.
type Kind string

// Event kinds, named as in the spec's $defs.
const (
	RunEvent     Kind = "RunEvent"
	DatasetEvent Kind = "DatasetEvent"
	JobEvent     Kind = "JobEvent"
)

// Run event types (RunEvent.eventType).
const (
	Start    = "START"
	Running  = "RUNNING"
	Complete = "COMPLETE"
	Abort    = "ABORT"
	Fail     = "FAIL"
	Other    = "OTHER"
)

// Event is one OpenLineage event of any kind. Facets are kept as raw JSON, keyed by facet name;
// the typed accessors (Dataset.ColumnLineage, Dataset.Symlinks, Job.SQL) decode the ones colline uses.
type Event struct {
	Kind      Kind
	EventTime time.Time
	Producer  string
	SchemaURL string
	EventType string    // RunEvent only; empty when the producer left it out
	Run       *Run      // RunEvent
	Job       *Job      // RunEvent, JobEvent
	Inputs    []Dataset // RunEvent, JobEvent
	Outputs   []Dataset // RunEvent, JobEvent
	Dataset   *Dataset  // DatasetEvent
}

// Run is a RunEvent's run.
type Run struct {
	RunID  string
	Facets map[string]json.RawMessage
}

// Job is the job of a RunEvent or JobEvent.
type Job struct {
	Namespace string
	Name      string
	Facets    map[string]json.RawMessage
}

// Dataset is an input, an output or a DatasetEvent's dataset.
type Dataset struct {
	Namespace    string
	Name         string
	Facets       map[string]json.RawMessage
	InputFacets  map[string]json.RawMessage // inputs only
	OutputFacets map[string]json.RawMessage // outputs only
}

type wireEvent struct {
	EventTime string   `json:"eventTime"`
	Producer  string   `json:"producer"`
	SchemaURL string   `json:"schemaURL"`
	EventType string   `json:"eventType"`
	Run       *wireRun `json:"run"`
	Job       *wireJob `json:"job"`
	Inputs    []wireDS `json:"inputs"`
	Outputs   []wireDS `json:"outputs"`
	Dataset   *wireDS  `json:"dataset"`
}

type wireRun struct {
	RunID  string                     `json:"runId"`
	Facets map[string]json.RawMessage `json:"facets"`
}

type wireJob struct {
	Namespace string                     `json:"namespace"`
	Name      string                     `json:"name"`
	Facets    map[string]json.RawMessage `json:"facets"`
}

type wireDS struct {
	Namespace    string                     `json:"namespace"`
	Name         string                     `json:"name"`
	Facets       map[string]json.RawMessage `json:"facets"`
	InputFacets  map[string]json.RawMessage `json:"inputFacets"`
	OutputFacets map[string]json.RawMessage `json:"outputFacets"`
}

// Decode reads one event without checking it against the schemas (Validator.Decode does both).
// It fails only when the bytes are not a JSON object or the kind cannot be told.
func Decode(data []byte) (*Event, error) {
	var w wireEvent
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&w); err != nil {
		return nil, fmt.Errorf("openlineage: %w", jsonError(data, err))
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, fmt.Errorf("openlineage: %w", jsonError(data, err))
	}
	k, err := kindOf(w.SchemaURL, func(f string) bool { return raw[f] != nil && string(raw[f]) != "null" })
	if err != nil {
		return nil, err
	}
	e := &Event{Kind: k, Producer: w.Producer, SchemaURL: w.SchemaURL, EventType: w.EventType}
	if w.EventTime != "" {
		t, err := time.Parse(time.RFC3339Nano, w.EventTime)
		if err != nil {
			return nil, fmt.Errorf("openlineage: eventTime %q is not an RFC 3339 date-time", w.EventTime)
		}
		e.EventTime = t
	}
	if w.Run != nil {
		e.Run = &Run{RunID: w.Run.RunID, Facets: w.Run.Facets}
	}
	if w.Job != nil {
		e.Job = &Job{Namespace: w.Job.Namespace, Name: w.Job.Name, Facets: w.Job.Facets}
	}
	for _, d := range w.Inputs {
		e.Inputs = append(e.Inputs, Dataset(d))
	}
	for _, d := range w.Outputs {
		e.Outputs = append(e.Outputs, Dataset(d))
	}
	if w.Dataset != nil {
		d := Dataset(*w.Dataset)
		e.Dataset = &d
	}
	return e, nil
}

// kindOf tells the event's kind: from the schemaURL's fragment when it names one, else from the
// fields the spec requires of each kind (run: RunEvent; dataset: DatasetEvent; job: JobEvent).
func kindOf(schemaURL string, has func(field string) bool) (Kind, error) {
	if _, frag, ok := strings.Cut(schemaURL, "#"); ok {
		switch strings.TrimPrefix(frag, "/$defs/") {
		case string(RunEvent):
			return RunEvent, nil
		case string(DatasetEvent):
			return DatasetEvent, nil
		case string(JobEvent):
			return JobEvent, nil
		}
	}
	switch {
	case has("run"):
		return RunEvent, nil
	case has("dataset"):
		return DatasetEvent, nil
	case has("job"):
		return JobEvent, nil
	}
	return "", errors.New("openlineage: not an OpenLineage event: no run, job or dataset, and no event kind in schemaURL")
}

// ErrInvalidJSON is matched (errors.Is) by the error for bytes that are not JSON at all.
var ErrInvalidJSON = errors.New("not JSON")

// notJSON is a parse error of bytes that are not JSON; it matches ErrInvalidJSON.
type notJSON struct{ error }

func (notJSON) Is(target error) bool { return target == ErrInvalidJSON }

// jsonError adds the line and column to a syntax error.
func jsonError(data []byte, err error) error {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		line := 1 + bytes.Count(data[:se.Offset], []byte("\n"))
		col := se.Offset - int64(bytes.LastIndexByte(data[:se.Offset], '\n'))
		return notJSON{fmt.Errorf("not JSON at line %d, column %d: %w", line, col, err)}
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return fmt.Errorf("not an event object: %s is %s, want %s", orRoot(te.Field), te.Value, te.Type)
	}
	return notJSON{fmt.Errorf("not JSON: %w", err)}
}

func orRoot(field string) string {
	if field == "" {
		return "the document"
	}
	return field
}
