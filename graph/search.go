package graph

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
)

// Hit is one search result.
type Hit struct {
	Kind    string `json:"kind"` // "dataset", "column" or "job"
	Key     string `json:"key"`
	Name    string `json:"name"`
	Dataset string `json:"dataset,omitempty"` // a column's dataset key
	Match   string `json:"match"`             // "exact", "prefix" or "substring"
}

// MaxHits bounds Search.
const MaxHits = 200

// search finds names that start with $q (the range index on Column.name; the text indexes for
// datasets and jobs) and names that contain it (the text indexes), each branch stopping at $n.
const search = `CALL () {
  MATCH (c:Column) WHERE c.name STARTS WITH $q
  RETURN 'column' AS kind, c.key AS key, c.name AS name, c.datasetKey AS dataset, 1 AS rank LIMIT $n
  UNION ALL
  MATCH (c:Column) WHERE c.name CONTAINS $q
  RETURN 'column' AS kind, c.key AS key, c.name AS name, c.datasetKey AS dataset, 2 AS rank LIMIT $n
  UNION ALL
  MATCH (d:Dataset) WHERE d.name STARTS WITH $q
  RETURN 'dataset' AS kind, d.key AS key, d.name AS name, null AS dataset, 1 AS rank LIMIT $n
  UNION ALL
  MATCH (d:Dataset) WHERE d.name CONTAINS $q
  RETURN 'dataset' AS kind, d.key AS key, d.name AS name, null AS dataset, 2 AS rank LIMIT $n
  UNION ALL
  MATCH (j:Job) WHERE j.name STARTS WITH $q
  RETURN 'job' AS kind, j.key AS key, j.name AS name, null AS dataset, 1 AS rank LIMIT $n
  UNION ALL
  MATCH (j:Job) WHERE j.name CONTAINS $q
  RETURN 'job' AS kind, j.key AS key, j.name AS name, null AS dataset, 2 AS rank LIMIT $n%s
}
RETURN kind, key, name, dataset, min(rank) AS rank`

// searchDotted is the branch search gets for a query "table.column": the columns whose name
// starts with the part after the last dot ($col) of the datasets whose name contains the part
// before it ($tbl), found through the datasets' text index (filtering every column named $col…
// by its table cost about 130,000 database hits on the benchmarks' 1M-edge graph; this, about
// 600). Other queries leave it out rather than guard it with a test of $col: given an empty $col
// the planner seeks the name index for names starting with it, every column, before it looks at
// the guard, so each prefix or substring search scanned every column.
const searchDotted = `
  UNION ALL
  MATCH (d:Dataset)-[:HAS_COLUMN]->(c:Column) WHERE d.name CONTAINS $tbl AND c.name STARTS WITH $col
  RETURN 'column' AS kind, c.key AS key, c.name AS name, c.datasetKey AS dataset, 1 AS rank LIMIT $n`

// Search finds datasets, columns and jobs whose name starts with or contains q (case as stored:
// catalog tables and their columns' keys are lower case, names keep Spark's spelling), at most
// limit (1..MaxHits) of each kind: exact names first, then prefixes, then substrings, each by
// name. Each kind's prefix and substring matches are each cut at limit in the database (prefixes
// in the name index's order, so the first limit names), so a query matching a million names costs
// what limit rows cost.
func (r *Reader) Search(ctx context.Context, q string, limit int) ([]Hit, error) {
	if limit < 1 || limit > MaxHits {
		return nil, fmt.Errorf("graph search: limit %d out of range 1..%d", limit, MaxHits)
	}
	if q == "" {
		return nil, nil
	}
	params := map[string]any{"q": q, "n": int64(limit)}
	cypher := fmt.Sprintf(search, "")
	tbl, col := "", ""
	if i := strings.LastIndex(q, "."); i > 0 && i < len(q)-1 {
		tbl, col = q[:i], q[i+1:]
		params["tbl"], params["col"] = tbl, col
		cypher = fmt.Sprintf(search, searchDotted)
	}
	res, err := r.query(ctx, cypher, params)
	if err != nil {
		return nil, fmt.Errorf("graph search %q: %w", q, err)
	}
	var hits []Hit
	for _, rec := range res.Records {
		h := Hit{}
		h.Kind, _ = get[string](rec, "kind")
		h.Key, _ = get[string](rec, "key")
		h.Name, _ = get[string](rec, "name")
		h.Dataset, _ = get[string](rec, "dataset")
		rank, _ := get[int64](rec, "rank")
		h.Match = "substring"
		switch {
		case h.Name == q || (col != "" && h.Name == col && h.Kind == "column"):
			h.Match = "exact"
		case rank == 1:
			h.Match = "prefix"
		}
		hits = append(hits, h)
	}
	order := map[string]int{"exact": 0, "prefix": 1, "substring": 2}
	kinds := map[string]int{"column": 0, "dataset": 1, "job": 2}
	slices.SortFunc(hits, func(a, b Hit) int {
		return cmp.Or(cmp.Compare(kinds[a.Kind], kinds[b.Kind]), cmp.Compare(order[a.Match], order[b.Match]),
			cmp.Compare(a.Name, b.Name), cmp.Compare(a.Key, b.Key))
	})
	// At most limit per kind.
	out := hits[:0]
	count := map[string]int{}
	for _, h := range hits {
		if count[h.Kind] < limit {
			out = append(out, h)
			count[h.Kind]++
		}
	}
	return out, nil
}
