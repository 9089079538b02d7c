package tags

import (
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/colline/colline/plan"
)

// Tag is a column tag: a key (pii), a value (email; "true" where a source gives none) and the
// source that set it.
type Tag struct {
	Key    string `json:"key"`
	Value  string `json:"value"`
	Source string `json:"source"`
}

// String renders a tag as key=value (source).
func (t Tag) String() string { return t.Key + "=" + t.Value + " (" + t.Source + ")" }

// Sources of tags, as Tag.Source or its start.
const (
	SourceFile          = "file:"          // file:<the file's source name>, a tag file (file.go)
	SourceDBT           = "dbt:"           // dbt:<project>, a dbt manifest's column tags and meta (dbt.go)
	SourceOpenLineage   = "openlineage"    // a TagsDatasetFacet; openlineage:<its source> when it names one
	SourceSparkComment  = "spark:comment"  // a catalog column's comment (plan.CommentTags)
	SourceSparkProperty = "spark:property" // a catalog table's colline.tags.<column> property
)

// Rule tags every column it matches with Tag: a pattern over dataset keys and one over column
// names (the part of a column key after its dataset's key and "#": lower-cased, a struct field
// as parent.field). A rule whose two patterns have no wildcard names one column (ColumnKey).
type Rule struct {
	Tag
	Dataset Glob `json:"dataset"`
	Column  Glob `json:"column"`
}

// ColumnKey returns the key of the one column the rule names, if its patterns name one.
func (r Rule) ColumnKey() (string, bool) {
	if !r.Dataset.Literal() || !r.Column.Literal() {
		return "", false
	}
	return string(r.Dataset) + "#" + string(r.Column), true
}

// Matches reports whether the rule tags the column key of dataset dataset.
func (r Rule) Matches(dataset, column string) bool {
	name, ok := strings.CutPrefix(column, dataset+"#")
	return ok && r.Dataset.Match(dataset) && r.Column.Match(name)
}

// Glob is a pattern: "*" stands for any run of characters, "?" for any one, everything else for
// itself.
type Glob string

// Literal reports whether g has no wildcard.
func (g Glob) Literal() bool { return !strings.ContainsAny(string(g), "*?") }

// Prefix is the literal start of g, before its first wildcard.
func (g Glob) Prefix() string {
	if i := strings.IndexAny(string(g), "*?"); i >= 0 {
		return string(g[:i])
	}
	return string(g)
}

// Regexp is g as an anchored regular expression that Go's regexp and Neo4j's =~ (Java) read the
// same way.
func (g Glob) Regexp() string {
	var b strings.Builder
	b.WriteString("^")
	for _, part := range strings.SplitAfter(string(g), "") {
		switch part {
		case "*":
			b.WriteString("(?s:.*)")
		case "?":
			b.WriteString("(?s:.)")
		default:
			b.WriteString(regexp.QuoteMeta(part))
		}
	}
	b.WriteString("$")
	return b.String()
}

// Match reports whether s matches g.
func (g Glob) Match(s string) bool {
	if g.Literal() {
		return s == string(g)
	}
	return matchGlob([]rune(string(g)), []rune(s))
}

// matchGlob is the classic wildcard match, backtracking to the last star only.
func matchGlob(p, s []rune) bool {
	pi, si, star, mark := 0, 0, -1, 0
	for si < len(s) {
		switch {
		case pi < len(p) && (p[pi] == '?' || p[pi] == s[si]):
			pi, si = pi+1, si+1
		case pi < len(p) && p[pi] == '*':
			star, mark = pi, si
			pi++
		case star >= 0:
			mark++
			pi, si = star+1, mark
		default:
			return false
		}
	}
	for pi < len(p) && p[pi] == '*' {
		pi++
	}
	return pi == len(p)
}

// Policy is a tag key's settings.
type Policy struct {
	Key string `json:"key"`
	// Aggregation says whether the tag passes an aggregation (sum, max, collect_list, …):
	// AggregationPass (the default: a sum of salaries is still a salary figure) or
	// AggregationStop. A count never passes: it masks (docs/lineage-semantics.md).
	Aggregation string `json:"aggregation"`
	// Allowed are the datasets where the tag may arrive unmasked (patterns over dataset keys);
	// none: anywhere. The datasets of its sources always may.
	Allowed     []Glob `json:"allowed,omitempty"`
	Description string `json:"description,omitempty"`
	Source      string `json:"source,omitempty"` // where the settings come from; "" for the defaults
}

// Aggregation settings.
const (
	AggregationPass = "pass"
	AggregationStop = "stop"
)

// DefaultPolicy is the settings of a tag that no file describes.
func DefaultPolicy(key string) Policy { return Policy{Key: key, Aggregation: AggregationPass} }

// Allows reports whether the tag may arrive unmasked in dataset.
func (p Policy) Allows(dataset string) bool {
	if len(p.Allowed) == 0 {
		return true
	}
	for _, g := range p.Allowed {
		if g.Match(dataset) {
			return true
		}
	}
	return false
}

// Restricted reports whether the policy names allowed destinations.
func (p Policy) Restricted() bool { return len(p.Allowed) > 0 }

// Status is how a tag arrives in a column.
type Status string

const (
	// Unmasked: the column holds the tagged value, copied or computed from it; it carries the tag.
	Unmasked Status = "unmasked"
	// Aggregated: the column holds only an aggregate of it, and the tag stops at aggregations.
	Aggregated Status = "aggregated"
	// Masked: the column holds it only hashed, counted or masked; the tag stops there.
	Masked Status = "masked"
)

// rank orders statuses: an unmasked arrival is the one to report.
func (s Status) rank() int {
	switch s {
	case Unmasked:
		return 3
	case Aggregated:
		return 2
	case Masked:
		return 1
	}
	return 0
}

// Role is one way a hop's source takes part in its target (plan.Transformation as stored).
type Role struct {
	Type    string `json:"type"`
	Subtype string `json:"subtype"`
	Expr    string `json:"expr,omitempty"`
	Masked  bool   `json:"masked,omitempty"`
	// Rows: a DECIDES_ROWS role that decides only the rows of some UNION branches lists the
	// datasets those rows come from (plan.Transformation.Rows); empty: every row.
	Rows []string `json:"rows,omitempty"`
}

// String renders a role as TYPE/SUBTYPE, with " masked" when it masks.
func (r Role) String() string {
	s := r.Type + "/" + r.Subtype
	if r.Masked {
		s += " masked"
	}
	return s
}

// Roles converts plan's transformations.
func Roles(ts []plan.Transformation) []Role {
	out := make([]Role, len(ts))
	for i, t := range ts {
		out[i] = Role{Type: t.Type, Subtype: t.Subtype, Expr: t.Expr, Masked: t.Masking, Rows: t.RowSources()}
	}
	return out
}

// Hop kinds.
const (
	Feeds       = "FEEDS"        // a column's value flows into another's
	DecidesRows = "DECIDES_ROWS" // a column decides which rows a dataset gets (To is the dataset)
	Field       = "FIELD"        // a struct column holds its field (To is the field)
	Parent      = "PARENT"       // a field is part of its struct column (To is the struct)
)

// Hop is one step of lineage, in the direction data flows: From feeds To in the job Job, in the
// ways Roles says (FEEDS, DECIDES_ROWS), or From holds To or is part of it (FIELD, PARENT).
type Hop struct {
	Kind        string `json:"kind"`
	From        string `json:"from"`
	To          string `json:"to"`
	FromDataset string `json:"fromDataset"`
	ToDataset   string `json:"toDataset"`
	Job         string `json:"job,omitempty"`
	Roles       []Role `json:"roles,omitempty"`
}

// String renders a hop on one line: from -> to [job] roles.
func (h Hop) String() string {
	roles := make([]string, len(h.Roles))
	for i, r := range h.Roles {
		roles[i] = r.String()
	}
	s := h.From + " -> " + h.To
	if h.Kind != Feeds {
		s = h.From + " -" + h.Kind + "-> " + h.To
	}
	if h.Job != "" {
		s += " [" + h.Job + "]"
	}
	if len(roles) > 0 {
		s += " " + strings.Join(roles, ", ")
	}
	return s
}

// ErrBadKey says that a tag key is not one (validKey).
var ErrBadKey = errors.New("bad tag key")

// validKey is what a tag key may be: letters, digits and _ . : - (as dbt tags and OpenLineage
// tag keys are written), 1 to 100 of them.
var validKey = regexp.MustCompile(`^[\p{L}\p{N}_.:\-]{1,100}$`)

// maxValue bounds a tag's value.
const maxValue = 200

// Valid checks a tag's key and value: what a source may set (a key of 1 to 100 letters, digits
// and _ . : -, a value of at most 200 bytes).
func Valid(key, value string) error { return checkTag(key, value) }

// checkTag checks a tag's key and value.
func checkTag(key, value string) error {
	if !validKey.MatchString(key) {
		return fmt.Errorf("%w %q: use 1 to 100 letters, digits, _ . : or -", ErrBadKey, key)
	}
	if len(value) > maxValue {
		return fmt.Errorf("tag %s: value of %d bytes; at most %d", key, len(value), maxValue)
	}
	return nil
}
