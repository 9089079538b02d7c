package plan

import (
	"maps"
	"slices"
	"sort"
	"strings"
)

// Struct fields (event format 1.4). Where Spark's plan resolves a field, lineage is kept at the
// level of the field, as users address it (`address.city`, `items.sku`,
// `from_json(js, …).kind`), with the whole column as its parent:
//
//   - reading: GetStructField and GetArrayStructFields carry the field's name; the path they
//     extract is pushed down the expression to the attribute, and the attribute's sources are
//     narrowed to it: a source that fed the whole value becomes its field (`src#address.city`), a
//     source that fed one field of a struct built upstream stays only if it fed that field;
//   - building: CreateNamedStruct (named_struct, struct) carries its field names; a value placed in
//     field f feeds field f of the target (`dst#nested.f`);
//   - both pass through expressions that keep a value's structure (casts, aliases, to_json and
//     from_json, the value branches of IF/CASE/COALESCE) and stop at any other expression, where
//     the edge falls back to the whole column, as before 1.4 (and for older events, which carry no
//     field names). The analyzer's cast of a struct to a table's struct type,
//     IF(x IS NULL, NULL, named_struct(…)), keeps every field's value. A map value or an array element by index has no field name in the schema: an
//     element's field (`items[0].sku`) is the array's field (`items.sku`), TRANSFORMATION.
//
// A field's key is its column's key followed by the dotted path (ColumnKey, FieldKey); a name that
// contains a dot or a backquote is quoted with backquotes, as Spark quotes identifiers.
//
// The expressions that read or build fields are walked with the others (expr.go: nested); this
// file narrows sources to a field, names fields, feeds them and lists them in their datasets.

// narrow returns the sources of field path of a value whose sources are d (see the package
// comment above): a source of the whole value becomes its field; a source of one field of the
// value is kept if it fed the field path or a field inside it; an indirect source (a condition
// deciding the value) decides the field too.
func (r *resolver) narrow(d deps, path string) deps {
	r.charge(len(d))
	out := make(deps, len(d))
	for _, src := range slices.Sorted(maps.Keys(d)) {
		for _, t := range d[src] {
			switch {
			case t.indirect != "":
				out.add(src, dep{t})
			case t.field == "":
				out.add(r.fieldKey(src, path), dep{t})
			case strings.EqualFold(t.field, path):
				t.field = ""
				out.add(src, dep{t})
			case hasPathPrefix(t.field, path):
				t.field = t.field[len(path)+1:]
				out.add(src, dep{t})
			case hasPathPrefix(path, t.field):
				rest := path[len(t.field)+1:]
				t.field = ""
				out.add(r.fieldKey(src, rest), dep{t})
			}
		}
	}
	return out
}

// fieldKey returns the key of field path (dotted, quoted) of the column or field parent, and
// records every level on the way, so that the fields become columns of their dataset with their
// parents (addFields).
func (r *resolver) fieldKey(parent, path string) string {
	for path != "" {
		head, rest := splitPath(path)
		key := parent + "." + strings.ToLower(head)
		if _, ok := r.fields[key]; !ok {
			r.fields[key] = fieldOf{parent: parent, name: head}
		}
		parent, path = key, rest
	}
	return parent
}

// addFields adds the fields met during extraction to the datasets whose columns they are fields
// of (a table both read and written has them in both), parents first, each with the key of its
// parent.
func (r *resolver) addFields() {
	if len(r.fields) == 0 {
		return
	}
	type owner struct {
		d    *Dataset
		name string
	}
	owners := map[string][]owner{}
	for d := range r.columns {
		for k := range d.Columns {
			c := &d.Columns[k]
			owners[c.Key] = append(owners[c.Key], owner{d, c.Name})
		}
	}
	keys := make([]string, 0, len(r.fields))
	for k := range r.fields {
		keys = append(keys, k)
	}
	sort.Strings(keys) // a parent's key is a prefix of its fields' keys: parents first
	for _, k := range keys {
		f := r.fields[k]
		for _, o := range owners[f.parent] { // none: a parent that is no column of a read or written dataset
			name := o.name + "." + f.name
			owners[k] = append(owners[k], owner{o.d, name})
			if !r.columns[o.d][k] {
				r.columns[o.d][k] = true
				o.d.Columns = append(o.d.Columns, Column{Key: k, Name: name, Parent: f.parent})
			}
		}
	}
}

// feedColumn adds the edges of the sources d of the value written to column name of target: a
// source that fed a field of a built struct feeds that field of the column.
func (r *resolver) feedColumn(target *Dataset, name, col string, d deps) {
	for _, src := range slices.Sorted(maps.Keys(d)) {
		var whole dep
		parts := map[string]dep{}
		for _, t := range d[src] {
			if t.field == "" {
				whole = whole.merge(t)
				continue
			}
			f := t.field
			t.field = ""
			parts[f] = parts[f].merge(t)
		}
		if whole != nil {
			r.addEdge(r.edges, src, col, whole)
		}
		for _, f := range slices.Sorted(maps.Keys(parts)) {
			key := r.fieldKey(col, f)
			r.addColumn(target, name, "") // the parent is a column of the target (fed or not)
			r.addEdge(r.edges, src, key, parts[f])
		}
	}
}

// splitPath splits a dotted path after its first (possibly quoted) name.
func splitPath(p string) (head, rest string) {
	if strings.HasPrefix(p, "`") {
		for k := 1; k < len(p); k++ {
			if p[k] != '`' {
				continue
			}
			if k+1 < len(p) && p[k+1] == '`' {
				k++ // an escaped backquote
				continue
			}
			head, rest = p[:k+1], p[k+1:]
			return head, strings.TrimPrefix(rest, ".")
		}
		return p, ""
	}
	if k := strings.IndexByte(p, '.'); k >= 0 {
		return p[:k], p[k+1:]
	}
	return p, ""
}

// hasPathPrefix reports whether path p lies inside path prefix (prefix + "." + more).
func hasPathPrefix(p, prefix string) bool {
	return len(p) > len(prefix)+1 && p[len(prefix)] == '.' && strings.EqualFold(p[:len(prefix)], prefix)
}
