package plan

import (
	"errors"
	"fmt"

	"github.com/colline/colline/events"
)

// Extract computes the lineage of one event: for every write in the plan (and every persistent
// view it reads), the source columns of each target column, with a transformation type. Of a
// degraded event (markers.truncated) it extracts table-level lineage only (Lineage.Degraded).
//
// A bug that panics on some plan must not stop the consumer: the panic becomes an ErrUnsupported
// error (the event goes to the dead-letter topic). The fuzz test calls extract directly, so that
// such panics are found rather than hidden.
func Extract(env *events.Envelope) (lin *Lineage, err error) {
	return ExtractWithin(env, DefaultBudget)
}

// ExtractWithin is Extract within budget b (zero fields: DefaultBudget's). Of a plan over budget
// it extracts table-level lineage only, as of a degraded event, with Lineage.OverBudget naming the
// budget and the figure: the run, what it read and what it wrote still reach the graph, marked,
// and nothing is lost whole. That pass resolves no column, so its cost is linear in the event,
// whatever the plan's shape, and it needs no budget.
func ExtractWithin(env *events.Envelope, b Budget) (*Lineage, error) {
	lin, err := guarded(env, func() *Lineage { return extract(env, b) })
	var over *TooComplexError
	if !errors.As(err, &over) {
		return lin, err
	}
	lin, err = guarded(env, func() *Lineage { return tableLevel(env) })
	if err != nil {
		return nil, err
	}
	lin.OverBudget = over
	return lin, nil
}

// guarded runs f, turning its panics into errors: a *TooComplexError or ErrUnsupported as they
// are, any other (a bug) into ErrUnsupported.
func guarded(env *events.Envelope, f func() *Lineage) (lin *Lineage, err error) {
	defer func() {
		if p := recover(); p != nil {
			if e, ok := p.(error); ok && (errors.Is(e, ErrTooComplex) || errors.Is(e, ErrUnsupported)) {
				lin, err = nil, fmt.Errorf("event %s: %w", env.EventID, e)
				return
			}
			lin, err = nil, fmt.Errorf("%w: event %s: %v", ErrUnsupported, env.EventID, p)
		}
	}()
	return f(), nil
}

// extract panics with a *TooComplexError when the plan is over budget b.
func extract(env *events.Envelope, b Budget) *Lineage {
	lin, _ := extractCost(env, b, false)
	return lin
}

// tableLevel extracts the table-level lineage of env, as of a degraded event, with no budget.
func tableLevel(env *events.Envelope) *Lineage {
	lin, _ := extractCost(env, Budget{}, true)
	return lin
}

// extractCost is extract, also returning what the event cost against each budget. With
// tableOnly, or for a degraded event, it resolves no column: the lineage is table-level.
func extractCost(env *events.Envelope, b Budget, tableOnly bool) (*Lineage, Budget) {
	if env.Hive != nil {
		return extractHive(env, b, tableOnly)
	}
	b = b.withDefaults()
	var depth int
	if !tableOnly {
		if n := len(env.Nodes); n > b.Nodes {
			tooComplex(BudgetNodes, n, b.Nodes, true)
		}
		depth = planDepth(env.Nodes)
		if depth > b.Depth {
			tooComplex(BudgetDepth, depth, b.Depth, true)
		}
	}
	r := newResolver(env, b)
	degraded := env.Markers.Truncated || tableOnly
	if !degraded {
		r.checkCTERefs() // a degraded event may have lost the cteId arguments: it resolves no reference
	}
	r.writeSinks(env)
	if s, ok := resultSink(env); ok && len(r.sinks) == 0 && len(r.changes) == 0 {
		r.sinks = append(r.sinks, s)
	}
	if degraded {
		r.datasets(env.Root)
	}
	lin := &Lineage{Unknown: r.unknown, Changes: r.changes, Degraded: env.Markers.Truncated}
	// Resolving a sink can discover persistent views, which are sinks too: loop until done.
	for k := 0; k < len(r.sinks); k++ {
		s := r.sinks[k]
		w := r.write(s.target, s.mode)
		if degraded {
			r.declare(s, &w.Dataset)
		} else {
			r.feed(s, &w.Dataset)
		}
	}
	r.addFields()
	for _, w := range r.writes {
		if w.Mode == "" && w.Kind == "view" {
			w.Mode = "view"
		}
		if rd, ok := r.reads[w.Key]; ok && w.Kind == "view" && len(w.Columns) == 0 {
			w.Columns = rd.Columns
		}
	}
	r.finish(lin)
	lin.Tags = catalogTags(env)
	return lin, Budget{Depth: max(r.deepest, depth), Nodes: len(env.Nodes), Edges: r.charged, Work: r.work}
}
