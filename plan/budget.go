package plan

import (
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/colline/colline/events"
)

// Budget bounds what extracting one event may cost, whatever the plan's shape: a plan within the
// event size limit can still be deep enough to overflow the stack, or fan out into more lineage
// than memory holds. Extraction checks each budget as it goes and stops with a *TooComplexError
// (errors.Is ErrTooComplex) before the figure is exceeded. Zero fields take the defaults.
type Budget struct {
	// Depth is the longest chain of plan nodes (children, subquery plans, a write's query) and the
	// deepest nesting of node resolution.
	Depth int
	// Nodes is the number of plan nodes in the event.
	Nodes int
	// Edges is the number of lineage pairs plus their roles (each transformation of a column edge
	// or row-level dependency) the event yields.
	Edges int
	// Work is the number of source-column entries copied or merged while resolving attributes: it
	// bounds the time and memory of the intermediate lineage, which a plan can make much larger
	// than its result (an attribute with many sources referenced many times).
	Work int
}

// DefaultBudget is the budget of Extract. Each figure is far above what real plans reach (the
// TPC-DS corpus and the golden captures peak at depth 39, 262 nodes, 442 edges and roles, 3,019
// entries of work; TestBudgetHeadroom keeps a margin of 20 or more), and low enough that an
// event within all of them costs about a second of extraction and 100 MB at most: an entry of
// work takes about 80 bytes until extraction ends (plan/hostile's alias-chain reaches the work
// budget from a 2 MB event). The edges budget is the tightest, 22 times the largest real figure,
// because what holds a partition longest is writing the lineage to Neo4j: up to 0.3 ms of Neo4j
// CPU per unit, 2.8 s for the worst shape at the budget (the paths shape reaches it from a 13 KB
// event; docs/benchmarks.md, "Hostile plans, third pass"). The consumer's batches hold at most
// one edges budget of lineage (ingest), so the budgets bound its memory and its write time too.
var DefaultBudget = Budget{Depth: 5000, Nodes: 100_000, Edges: 10_000, Work: 1_000_000}

// WithDefaults returns b with its zero fields taken from DefaultBudget.
func (b Budget) WithDefaults() Budget { return b.withDefaults() }

// withDefaults fills zero fields from DefaultBudget.
func (b Budget) withDefaults() Budget {
	if b.Depth <= 0 {
		b.Depth = DefaultBudget.Depth
	}
	if b.Nodes <= 0 {
		b.Nodes = DefaultBudget.Nodes
	}
	if b.Edges <= 0 {
		b.Edges = DefaultBudget.Edges
	}
	if b.Work <= 0 {
		b.Work = DefaultBudget.Work
	}
	return b
}

// ErrTooComplex is matched (errors.Is) by every *TooComplexError. It is permanent.
var ErrTooComplex = errors.New("plan too complex")

// Budget names, the Budget field each error is about.
const (
	BudgetDepth = "depth"
	BudgetNodes = "nodes"
	BudgetEdges = "edges"
	BudgetWork  = "work"
)

// TooComplexError says which budget a plan exceeded, by how much, and how to raise it.
type TooComplexError struct {
	Budget string // BudgetDepth, BudgetNodes, BudgetEdges or BudgetWork
	Figure int    // the plan's figure, or the count when extraction stopped (over Limit)
	Limit  int
	Exact  bool // Figure is the plan's own figure, not where extraction stopped
}

func (e *TooComplexError) Error() string {
	over := "more than"
	if e.Exact {
		over = "is"
	}
	what := map[string]string{
		BudgetDepth: "plan depth (nested nodes)",
		BudgetNodes: "plan nodes",
		BudgetEdges: "lineage edges and roles",
		BudgetWork:  "source-column entries resolved",
	}[e.Budget]
	fig := fmt.Sprintf("%s %d", over, e.Figure)
	if !e.Exact {
		fig = fmt.Sprintf("%s %d", over, e.Limit)
	}
	return fmt.Sprintf("%v: %s %s, the %s budget is %d (raise COLLINE_MAX_PLAN_%s if such plans are legitimate)",
		ErrTooComplex, what, fig, e.Budget, e.Limit, upper(e.Budget))
}

// Is makes errors.Is(err, ErrTooComplex) true.
func (e *TooComplexError) Is(target error) bool { return target == ErrTooComplex }

func upper(s string) string {
	b := []byte(s)
	for k, c := range b {
		if 'a' <= c && c <= 'z' {
			b[k] = c - 'a' + 'A'
		}
	}
	return string(b)
}

// tooComplex stops extraction: extract's callers recover it (a budget is met deep in a
// recursion, and unwinding is what frees the stack).
func tooComplex(budget string, figure, limit int, exact bool) {
	panic(&TooComplexError{Budget: budget, Figure: figure, Limit: limit, Exact: exact})
}

// planDepth returns the length of the longest chain of node references from any node (children,
// subquery plans, named plans, a write's query), computed without recursion. A cycle, impossible
// in a valid event, is cut where it closes. Its stacks are reused from call to call (depthScratch).
func planDepth(nodes []events.Node) int {
	sc := depthScratches.Get().(*depthScratch)
	defer depthScratches.Put(sc)
	depth := slices.Grow(sc.depth[:0], len(nodes))[:len(nodes)] // 0: not visited; -1: on the stack; else the depth
	clear(depth)
	frames, refs := sc.frames[:0], sc.refs[:0]
	deepest := 0
	for root := range nodes {
		if depth[root] != 0 {
			continue
		}
		depth[root] = -1
		refs = sc.appendRefs(refs, nodes, root)
		frames = append(frames, depthFrame{node: root, refs: len(refs), next: 0})
		for len(frames) > 0 {
			f := &frames[len(frames)-1]
			lo := 0
			if len(frames) > 1 {
				lo = frames[len(frames)-2].refs
			}
			if lo+f.next < f.refs {
				c := refs[lo+f.next]
				f.next++
				if depth[c] == 0 {
					depth[c] = -1
					refs = sc.appendRefs(refs, nodes, c)
					frames = append(frames, depthFrame{node: c, refs: len(refs)})
				}
				continue
			}
			d := 1
			for _, c := range refs[lo:f.refs] {
				if depth[c] > 0 && depth[c]+1 > d {
					d = depth[c] + 1
				}
			}
			depth[f.node] = d
			deepest = max(deepest, d)
			refs = refs[:lo]
			frames = frames[:len(frames)-1]
		}
	}
	clear(sc.exprs[:cap(sc.exprs)]) // no pointer into the event outlives the call
	sc.depth, sc.frames, sc.refs = depth, frames, refs
	return deepest
}

// depthFrame is a node on planDepth's stack: its references are refs[the previous frame's refs:refs].
type depthFrame struct {
	node, refs, next int
}

// depthScratch holds planDepth's stacks between calls.
type depthScratch struct {
	depth  []int
	frames []depthFrame
	refs   []int
	exprs  []*events.Expr
}

var depthScratches = sync.Pool{New: func() any { return new(depthScratch) }}

// appendRefs appends the references of nodes[i] that are inside nodes to refs.
func (sc *depthScratch) appendRefs(refs []int, nodes []events.Node, i int) []int {
	n := &nodes[i]
	for _, c := range n.Children {
		refs = appendRef(refs, c, len(nodes))
	}
	for _, p := range n.Plans {
		refs = appendRef(refs, p, len(nodes))
	}
	if n.Write != nil && n.Write.Query != nil {
		refs = appendRef(refs, *n.Write.Query, len(nodes))
	}
	stack := sc.exprs[:0]
	for _, list := range n.Exprs {
		for k := range list {
			stack = append(stack, &list[k])
		}
		for len(stack) > 0 {
			x := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if x.Plan != nil {
				refs = appendRef(refs, *x.Plan, len(nodes))
			}
			for k := range x.Children {
				stack = append(stack, &x.Children[k])
			}
		}
	}
	sc.exprs = stack[:0]
	return refs
}

func appendRef(refs []int, c, n int) []int {
	if c >= 0 && c < n {
		refs = append(refs, c)
	}
	return refs
}
