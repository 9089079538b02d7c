package cli

import (
	"context"
	"errors"
	"fmt"

	"github.com/colline/colline/record"
)

// Store is what Replay writes to; *graph.Writer satisfies it.
type Store interface {
	Bootstrap(ctx context.Context) error
	Write(ctx context.Context, items []record.Item) error
}

// Replay writes evs to s in order, batch events per transaction, after creating the schema. It
// checks every event first and writes nothing if one cannot be stored. Writes are idempotent:
// replaying the same events again changes nothing.
func Replay(ctx context.Context, s Store, evs []Event, batch int) error {
	if batch < 1 {
		return fmt.Errorf("batch size %d: must be at least 1", batch)
	}
	items := make([]record.Item, len(evs))
	var errs []error
	for i, ev := range evs {
		items[i] = record.Item{Event: ev.Env, Lineage: ev.Lineage}
		if err := record.Check(&items[i]); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", ev.Source, err))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	if err := s.Bootstrap(ctx); err != nil {
		return err
	}
	for start := 0; start < len(items); start += batch {
		end := min(start+batch, len(items))
		if err := s.Write(ctx, items[start:end]); err != nil {
			if end-start == 1 {
				return fmt.Errorf("%s: %w", evs[start].Source, err)
			}
			return fmt.Errorf("%s .. %s: %w", evs[start].Source, evs[end-1].Source, err)
		}
	}
	return nil
}
