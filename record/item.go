package record

import (
	"errors"
	"fmt"
	"time"

	"github.com/colline/colline/events"
	"github.com/colline/colline/plan"
)

// ErrInvalidItem marks an item that cannot be written as it is: a missing event id, job name or
// time, an empty key, an edge whose end is not a column of the event's datasets, a row-level
// dependency that is not from such a column to a dataset the event writes, or an edge without
// transformations. It is
// permanent: the same item fails the same way.
var ErrInvalidItem = errors.New("invalid graph item")

// Item is one event and the lineage extracted from it: a listener event (Event) or an
// OpenLineage event (OpenLineage), exactly one of the two.
type Item struct {
	Event       *events.Envelope
	OpenLineage *OpenLineage
	Lineage     *plan.Lineage

	checked bool // Check passed
}

// OpenLineage is what the graph keeps of an OpenLineage event besides its lineage: the job, and
// for a RunEvent the run with its state and parent. The events of one run (START, RUNNING,
// COMPLETE, FAIL, ...) share its RunID and merge into one Run.
type OpenLineage struct {
	Kind         string    // RunEvent, JobEvent or DatasetEvent
	EventType    string    // a RunEvent's eventType: START, RUNNING, COMPLETE, FAIL, ABORT, OTHER or ""
	EventTime    time.Time // the event's eventTime
	Producer     string    // the producer URI
	JobNamespace string    // the job; for a DatasetEvent, the dataset's namespace
	JobName      string    // for a DatasetEvent, the dataset's name
	RunID        string    // RunEvent only
	Parent       *ParentRun
}

// ParentRun is the run a run was spawned from: an OpenLineage run's parent facet, the streaming
// query's run of a foreachBatch write, or the scheduler's run a listener event names
// (events.Parent). Root is the run above the parent (an Airflow DAG run above its task's run, the
// scheduler's run above a streaming query's run) when the event gives it; nil otherwise.
type ParentRun struct {
	RunID, JobNamespace, JobName string
	Root                         *ParentRun
}

// ID names the item's event in logs and errors: the listener's event id, or an OpenLineage
// event's kind, run id (job for other kinds), type and time.
func (it Item) ID() string {
	switch {
	case it.Event != nil:
		return it.Event.EventID
	case it.OpenLineage != nil:
		o := it.OpenLineage
		id := o.RunID
		if id == "" {
			id = o.JobNamespace + "/" + o.JobName
		}
		return fmt.Sprintf("openlineage %s %s %s %s", o.Kind, id, o.EventType, o.EventTime.Format(time.RFC3339Nano))
	}
	return ""
}

// Job returns the key, namespace and name of the item's job: for a listener event the Spark
// application (JobKey), for an OpenLineage event its job (a DatasetEvent's dataset).
func (it Item) Job() (key, namespace, name string) {
	if it.OpenLineage != nil {
		o := it.OpenLineage
		return o.JobNamespace + "/" + o.JobName, o.JobNamespace, o.JobName
	}
	return JobKey(it.Event.App), it.Event.App.Namespace, it.Event.App.Name
}

// Run returns the key of the item's run: the listener's event id or the OpenLineage runId; ""
// for an OpenLineage JobEvent or DatasetEvent, which have no run.
func (it Item) Run() string {
	if it.OpenLineage != nil {
		return it.OpenLineage.RunID
	}
	return it.Event.EventID
}

// Parent returns the run an item's run was spawned from, nil when none: an OpenLineage run
// event's parent facet; for a listener event, the run of the streaming query whose foreachBatch
// micro-batch it wrote in (query.stream on an event that is not the stream's own; the stream's
// event has the run id as its id), with the scheduler's run (events.Parent) above it as Root;
// else the scheduler's run.
func (it Item) Parent() *ParentRun {
	if env := it.Event; env != nil {
		if st := env.Query.Stream; st != nil && st.RunID != "" && st.RunID != env.EventID && env.Query.FuncName != "stream" {
			return &ParentRun{RunID: st.RunID, JobNamespace: env.App.Namespace, JobName: env.App.Name, Root: parentRun(env.Parent)}
		}
		return parentRun(env.Parent)
	}
	if it.OpenLineage == nil || it.OpenLineage.RunID == "" {
		return nil
	}
	return it.OpenLineage.Parent
}

func parentRun(p *events.Parent) *ParentRun {
	if p == nil {
		return nil
	}
	return &ParentRun{RunID: p.RunID, JobNamespace: p.Namespace, JobName: p.Name, Root: parentRun(p.Root)}
}

// Time returns the time graph writes stamp the item with: EventTime for a listener event, the
// eventTime of an OpenLineage event.
func (it Item) Time() (time.Time, error) {
	if it.OpenLineage != nil {
		if it.OpenLineage.EventTime.IsZero() {
			return time.Time{}, fmt.Errorf("%w: %s has no eventTime", ErrInvalidItem, it.ID())
		}
		return it.OpenLineage.EventTime.UTC(), nil
	}
	return EventTime(it.Event)
}

// JobKey returns the key of the job an event belongs to: app namespace + "/" + app name. All runs
// of a Spark application with the same name in the same namespace are one job.
func JobKey(app events.App) string {
	return app.Namespace + "/" + app.Name
}

// EventTime returns the time graph writes stamp an event with: the query end time, or emittedAt
// when the end time is missing or unparseable. Both are RFC 3339.
func EventTime(env *events.Envelope) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339Nano, env.Query.EndedAt); err == nil {
		return t.UTC(), nil
	}
	t, err := time.Parse(time.RFC3339Nano, env.EmittedAt)
	if err != nil {
		return time.Time{}, fmt.Errorf("%w: event %q has neither a valid query.endedAt nor emittedAt", ErrInvalidItem, env.EventID)
	}
	return t.UTC(), nil
}

// Check reports whether an item can be written. Errors wrap ErrInvalidItem. An item that passes
// is marked, and so is every copy of it: Check does not run on it again. The processing step that
// makes an item checks it; the graph writer checks what it is given, which costs nothing for those
// items and still refuses one built by hand. Do not change an item after Check: make a new one.
func Check(it *Item) error {
	if it.checked {
		return nil
	}
	if err := check(*it); err != nil {
		return err
	}
	it.checked = true
	return nil
}

func check(it Item) error {
	if (it.Event == nil) == (it.OpenLineage == nil) || it.Lineage == nil {
		return fmt.Errorf("%w: item without event or lineage, or with both a listener and an OpenLineage event", ErrInvalidItem)
	}
	lin := it.Lineage
	id := it.ID()
	if env := it.Event; env != nil {
		if env.EventID == "" {
			return fmt.Errorf("%w: empty event id", ErrInvalidItem)
		}
		if env.App.Name == "" {
			return fmt.Errorf("%w: event %q: empty app name (the job key)", ErrInvalidItem, env.EventID)
		}
	} else {
		o := it.OpenLineage
		if o.JobName == "" || o.JobNamespace == "" {
			return fmt.Errorf("%w: %s: empty job namespace or name", ErrInvalidItem, id)
		}
		if o.Kind == "RunEvent" && o.RunID == "" {
			return fmt.Errorf("%w: %s: a run event without a run id", ErrInvalidItem, id)
		}
		if p := o.Parent; p != nil && (p.RunID == "" || p.JobNamespace == "" || p.JobName == "") {
			return fmt.Errorf("%w: %s: the parent run needs a run id, a job namespace and a job name", ErrInvalidItem, id)
		}
	}
	if _, err := it.Time(); err != nil {
		return err
	}
	columns := make(map[string]bool)
	written := make(map[string]bool)
	check := func(role string, i int, d *plan.Dataset) error {
		if d.Key == "" {
			return fmt.Errorf("%w: event %q: %s[%d] has an empty key", ErrInvalidItem, id, role, i)
		}
		for j, c := range d.Columns {
			if c.Key == "" {
				return fmt.Errorf("%w: event %q: %s[%d] (%s) column %d has an empty key", ErrInvalidItem, id, role, i, d.Key, j)
			}
			if c.Parent != "" && !columns[c.Parent] {
				return fmt.Errorf("%w: event %q: %s[%d] (%s) field %q has parent %q, which is no column listed before it", ErrInvalidItem, id, role, i, d.Key, c.Key, c.Parent)
			}
			columns[c.Key] = true
		}
		return nil
	}
	for i := range lin.Reads {
		if err := check("reads", i, &lin.Reads[i]); err != nil {
			return err
		}
	}
	for i := range lin.Writes {
		if err := check("writes", i, &lin.Writes[i].Dataset); err != nil {
			return err
		}
		written[lin.Writes[i].Key] = true
	}
	for i, c := range lin.Changes {
		for _, d := range []*plan.Dataset{&c.Dataset, c.To, c.From} {
			if d != nil && d.Key == "" {
				return fmt.Errorf("%w: event %q: changes[%d] (%s) names a dataset with an empty key", ErrInvalidItem, id, i, c.Action)
			}
		}
		if c.Action == plan.ChangeRename && c.To == nil {
			return fmt.Errorf("%w: event %q: changes[%d] renames %s to nothing", ErrInvalidItem, id, i, c.Dataset.Key)
		}
	}
	for i, e := range lin.Edges {
		for _, end := range [2]string{e.Source, e.Target} {
			if !columns[end] {
				return fmt.Errorf("%w: event %q: edge %d (%s -> %s): column %q is not a column of any read or written dataset",
					ErrInvalidItem, id, i, e.Source, e.Target, end)
			}
		}
	}
	for i, e := range lin.RowDeps {
		if !columns[e.Source] || !written[e.Target] {
			return fmt.Errorf("%w: event %q: row-level dependency %d (%s => %s): not from a column to a written dataset of the event",
				ErrInvalidItem, id, i, e.Source, e.Target)
		}
	}
	for _, list := range [][]plan.Edge{lin.Edges, lin.RowDeps} {
		for i, e := range list {
			if len(e.Transformations) == 0 {
				return fmt.Errorf("%w: event %q: edge %d (%s -> %s) has no transformation", ErrInvalidItem, id, i, e.Source, e.Target)
			}
		}
	}
	return nil
}
