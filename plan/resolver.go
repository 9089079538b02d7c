package plan

import (
	"sort"
	"strings"

	"github.com/colline/colline/events"
)

// resolver extracts the lineage of one Spark plan: it computes node scopes bottom-up, each node
// once (resolve.go), for the sinks of the plan (sinks.go), and holds what that takes: the nodes and
// their memos, the sinks found, the budgets spent, and what is collected (collect.go).
type resolver struct {
	nodes   []events.Node
	memo    []scope
	state   []uint8 // 0 new, 1 in progress, 2 done
	lastOut map[int64]int
	cteDefs map[int64]int
	loops   map[int64]int // UnionLoop nodes by loop id
	sinks   []sink
	// readOnly are the queries of sinks that are no dataset (a foreachBatch stream): their
	// sources are read, nothing is written
	readOnly []int
	unknown  map[string]int
	changes  []Change
	rowDeps  map[int]deps       // memo of decides
	sources  map[int]string     // memo of rowSources
	fields   map[string]fieldOf // struct fields met, by key (nested.go)
	budget   Budget
	depth    int // nesting of outputs and indirect now
	deepest  int // the most depth reached
	work     int // entries copied or merged so far (Budget.Work)
	collector
}

// scope maps the exprIds a node outputs to the source columns behind them.
type scope map[int64]deps

// sink is a dataset whose columns are fed, by position, by the outputs of node query.
type sink struct {
	target Dataset
	names  []string
	query  int
	mode   string
	view   bool
	// row-level writes (ReplaceData, WriteDelta; event format 1.3)
	inputs []int64 // exprId of the query output written to each column (dataInput), when not output k
	delta  bool    // WriteDelta: rows the delta does not touch keep their values
	update bool    // WriteDelta of an UPDATE: its filter chooses the rows that get new values
	// byCommand: the columns are fed by the row-level command at node command, which a connector
	// runs itself (Delta Lake's MERGE / UPDATE / DELETE; event format 1.4; command.go)
	byCommand bool
	command   int
}

// fieldOf is a struct field met during extraction: its parent's key and its own (quoted) name.
type fieldOf struct{ parent, name string }

const (
	stateNew = iota
	stateBusy
	stateDone
)

func newResolver(env *events.Envelope, b Budget) *resolver {
	r := &resolver{
		budget:    b,
		nodes:     env.Nodes,
		memo:      make([]scope, len(env.Nodes)),
		state:     make([]uint8, len(env.Nodes)),
		lastOut:   map[int64]int{},
		cteDefs:   map[int64]int{},
		loops:     map[int64]int{},
		unknown:   map[string]int{},
		rowDeps:   map[int]deps{},
		sources:   map[int]string{},
		fields:    map[string]fieldOf{},
		collector: newCollector(b.Edges),
	}
	for i := range env.Nodes {
		n := &env.Nodes[i]
		for _, a := range n.Output {
			r.lastOut[a.ExprID] = i
		}
		switch shortClass(n.Class) {
		case "CTERelationDef":
			if id, ok := intArg(n, "cteId"); ok {
				r.cteDefs[id] = i
			}
		case "UnionLoop":
			if id, ok := intArg(n, "loopId"); ok {
				r.loops[id] = i
			}
		}
	}
	return r
}

// enter counts one more level of recursion into a node; leave undoes it.
func (r *resolver) enter() {
	r.depth++
	r.deepest = max(r.deepest, r.depth)
	if r.depth > r.budget.Depth {
		tooComplex(BudgetDepth, r.depth, r.budget.Depth, false)
	}
}

func (r *resolver) leave() { r.depth-- }

// charge counts n entries of work.
func (r *resolver) charge(n int) {
	r.work += n
	if r.work > r.budget.Work {
		tooComplex(BudgetWork, r.work, r.budget.Work, false)
	}
}

// addAll merges o into d, charged to the work budget.
func (r *resolver) addAll(d, o deps) {
	r.charge(len(o))
	d.addAll(o)
}

// through is the package's through, charged to the work budget.
func (r *resolver) through(src deps, step ectx) deps {
	r.charge(len(src))
	return through(src, step)
}

// shortClass strips the package and a Scala object's trailing "$".
func shortClass(fqcn string) string {
	s := fqcn[strings.LastIndexByte(fqcn, '.')+1:]
	return strings.TrimSuffix(s, "$")
}

func intArg(n *events.Node, key string) (int64, bool) {
	switch v := n.Args[key].(type) {
	case float64:
		return int64(v), true
	case string:
		var x int64
		for _, c := range v {
			if c < '0' || c > '9' {
				return 0, false
			}
			x = x*10 + int64(c-'0')
		}
		return x, v != ""
	}
	return 0, false
}

// commands are plan roots that write or change datasets; they have no output of their own.
func isCommand(cls string) bool {
	return strings.HasSuffix(cls, "Command") || strings.HasPrefix(cls, "InsertInto") ||
		strings.HasPrefix(cls, "Create") || strings.HasPrefix(cls, "Replace") ||
		strings.HasPrefix(cls, "Overwrite") || strings.HasPrefix(cls, "Append") ||
		cls == "MergeIntoTable" || cls == "WriteDelta" || cls == "ReplaceData" ||
		cls == "CacheTableAsSelect" || cls == "CommandResult"
}

func names(attrs []events.Attribute) []string {
	out := make([]string, len(attrs))
	for k, a := range attrs {
		out[k] = a.Name
	}
	return out
}

func exprIDs(attrs []events.Attribute) []int64 {
	ids := make([]int64, len(attrs))
	for k, a := range attrs {
		ids[k] = a.ExprID
	}
	return ids
}

// sortedScope returns a scope's deps in exprId order, so merging is deterministic.
func sortedScope(s scope) []deps {
	ids := make([]int64, 0, len(s))
	for id := range s {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(a, b int) bool { return ids[a] < ids[b] })
	out := make([]deps, len(ids))
	for k, id := range ids {
		out[k] = s[id]
	}
	return out
}
