package analyze

import (
	"fmt"
	"sort"
	"strings"

	"github.com/colline/colline/plan"
)

// SessionCatalog is the namespace of the datasets DDL can define: the session catalog's tables
// and views (plan.Identify keys them spark_catalog/<db>.<table>).
const SessionCatalog = "spark_catalog"

// DDL returns schema statements that define datasets in the analyzer's own catalog: one CREATE
// DATABASE IF NOT EXISTS per database, one CREATE TABLE (USING parquet: a table with no data, to
// read from and write to) per table or view of the session catalog, with its columns in order
// and their types. Datasets that are not tables of the session catalog (paths, JDBC, Kafka,
// other catalogs) cannot be defined and are returned as skipped, with the reason; so is a
// dataset without columns.
func DDL(datasets []plan.Dataset) (sql string, skipped []string) {
	var b strings.Builder
	dbs := map[string]bool{}
	sorted := append([]plan.Dataset(nil), datasets...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Key < sorted[j].Key })
	for _, d := range sorted {
		db, table, ok := strings.Cut(d.Name, ".")
		switch {
		case d.Namespace != SessionCatalog || (d.Kind != "table" && d.Kind != "view"):
			skipped = append(skipped, fmt.Sprintf("%s: a %s, not a table of %s", d.Key, d.Kind, SessionCatalog))
			continue
		case !ok || db == "" || table == "":
			skipped = append(skipped, fmt.Sprintf("%s: not <database>.<table>", d.Key))
			continue
		case len(d.Columns) == 0:
			skipped = append(skipped, fmt.Sprintf("%s: no columns known", d.Key))
			continue
		}
		if !dbs[db] {
			dbs[db] = true
			fmt.Fprintf(&b, "CREATE DATABASE IF NOT EXISTS %s;\n", Quote(db))
		}
		cols := make([]string, len(d.Columns))
		for i, c := range d.Columns {
			typ := c.Type
			if typ == "" {
				typ = "string"
			}
			cols[i] = Quote(c.Name) + " " + typ
		}
		fmt.Fprintf(&b, "CREATE TABLE IF NOT EXISTS %s.%s (%s) USING parquet;\n", Quote(db), Quote(table), strings.Join(cols, ", "))
	}
	return b.String(), skipped
}

// Quote backquotes a Spark SQL identifier (a backquote inside is doubled).
func Quote(name string) string {
	return "`" + strings.ReplaceAll(name, "`", "``") + "`"
}
