package analyze

import (
	"fmt"
	"sort"
	"strings"

	"github.com/colline/colline/plan"
)

// SessionCatalog is the namespace of the datasets a Table can define: the session catalog's
// tables and views (plan.Identify keys them spark_catalog/<db>.<table>).
const SessionCatalog = "spark_catalog"

// GraphTables returns the tables and views of the session catalog among datasets (read from the
// graph) as Tables: their columns in order with their types, as data (the analyzer parses each
// type on its own and refuses a table whose type is not one Spark SQL type, naming the column).
// A view is defined as a table with the view's columns. Datasets that are not tables of the
// session catalog (paths, JDBC, Kafka, other catalogs) cannot be defined and are returned as
// skipped, with the reason; so is a dataset without columns. A column without a type is a string.
func GraphTables(datasets []plan.Dataset) (tables []Table, skipped []string) {
	sorted := append([]plan.Dataset(nil), datasets...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Key < sorted[j].Key })
	byKey, why := graphTables(sorted)
	for _, d := range sorted {
		if t := byKey[d.Key]; t != nil {
			tables = append(tables, *t)
		} else if w := why[d.Key]; w != "" {
			skipped = append(skipped, w)
		}
	}
	return tables, skipped
}

// graphTables is GraphTables by dataset key: the Table, or why the dataset cannot be one.
func graphTables(datasets []plan.Dataset) (map[string]*Table, map[string]string) {
	tables, skipped := map[string]*Table{}, map[string]string{}
	for _, d := range datasets {
		db, table, ok := strings.Cut(d.Name, ".")
		switch {
		case d.Namespace != SessionCatalog || (d.Kind != "table" && d.Kind != "view"):
			skipped[d.Key] = fmt.Sprintf("%s: a %s, not a table of %s", d.Key, d.Kind, SessionCatalog)
			continue
		case !ok || db == "" || table == "":
			skipped[d.Key] = fmt.Sprintf("%s: not <database>.<table>", d.Key)
			continue
		case len(d.Columns) == 0:
			skipped[d.Key] = fmt.Sprintf("%s: no columns known", d.Key)
			continue
		}
		t := &Table{Name: Quote(db) + "." + Quote(table), Source: SourceGraph}
		for _, c := range d.Columns {
			if c.Parent != "" {
				continue // a struct field: its column's type holds it
			}
			typ := c.Type
			if typ == "" {
				typ = "string"
			}
			t.Columns = append(t.Columns, Column{Name: c.Name, Type: typ, Nullable: true})
		}
		tables[d.Key] = t
	}
	return tables, skipped
}

// Quote backquotes a Spark SQL identifier (a backquote inside is doubled).
func Quote(name string) string {
	return "`" + strings.ReplaceAll(name, "`", "``") + "`"
}
