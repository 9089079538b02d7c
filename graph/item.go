package graph

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

// Item is one event and the lineage extracted from it.
type Item struct {
	Event   *events.Envelope
	Lineage *plan.Lineage
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

// Check reports whether an item can be written. Errors wrap ErrInvalidItem.
func Check(it Item) error {
	if it.Event == nil || it.Lineage == nil {
		return fmt.Errorf("%w: item without event or lineage", ErrInvalidItem)
	}
	env, lin := it.Event, it.Lineage
	if env.EventID == "" {
		return fmt.Errorf("%w: empty event id", ErrInvalidItem)
	}
	if env.App.Name == "" {
		return fmt.Errorf("%w: event %q: empty app name (the job key)", ErrInvalidItem, env.EventID)
	}
	if _, err := EventTime(env); err != nil {
		return err
	}
	columns := make(map[string]bool)
	written := make(map[string]bool)
	check := func(role string, i int, d *plan.Dataset) error {
		if d.Key == "" {
			return fmt.Errorf("%w: event %q: %s[%d] has an empty key", ErrInvalidItem, env.EventID, role, i)
		}
		for j, c := range d.Columns {
			if c.Key == "" {
				return fmt.Errorf("%w: event %q: %s[%d] (%s) column %d has an empty key", ErrInvalidItem, env.EventID, role, i, d.Key, j)
			}
			if c.Parent != "" && !columns[c.Parent] {
				return fmt.Errorf("%w: event %q: %s[%d] (%s) field %q has parent %q, which is no column listed before it", ErrInvalidItem, env.EventID, role, i, d.Key, c.Key, c.Parent)
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
				return fmt.Errorf("%w: event %q: changes[%d] (%s) names a dataset with an empty key", ErrInvalidItem, env.EventID, i, c.Action)
			}
		}
		if c.Action == plan.ChangeRename && c.To == nil {
			return fmt.Errorf("%w: event %q: changes[%d] renames %s to nothing", ErrInvalidItem, env.EventID, i, c.Dataset.Key)
		}
	}
	for i, e := range lin.Edges {
		for _, end := range [2]string{e.Source, e.Target} {
			if !columns[end] {
				return fmt.Errorf("%w: event %q: edge %d (%s -> %s): column %q is not a column of any read or written dataset",
					ErrInvalidItem, env.EventID, i, e.Source, e.Target, end)
			}
		}
	}
	for i, e := range lin.RowDeps {
		if !columns[e.Source] || !written[e.Target] {
			return fmt.Errorf("%w: event %q: row-level dependency %d (%s => %s): not from a column to a written dataset of the event",
				ErrInvalidItem, env.EventID, i, e.Source, e.Target)
		}
	}
	for _, list := range [][]plan.Edge{lin.Edges, lin.RowDeps} {
		for i, e := range list {
			if len(e.Transformations) == 0 {
				return fmt.Errorf("%w: event %q: edge %d (%s -> %s) has no transformation", ErrInvalidItem, env.EventID, i, e.Source, e.Target)
			}
		}
	}
	return nil
}
