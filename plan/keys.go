package plan

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"net/url"
	"strings"

	"github.com/colline/colline/events"
)

// Identify returns the datasets an identity from the listener stands for, with Namespace, Name,
// Key and Kind set and no columns. It returns none for inline data (local relations, ranges) and
// opaque sources (RDDs), which have no name to carry lineage across jobs. A path relation over
// several root paths and a Kafka read of several topics stand for one dataset each.
//
// Keys follow OpenLineage's naming: a catalog table is namespace = its catalog, name = db.table;
// a path is namespace = scheme[://authority], name = the path; a JDBC table is namespace = the
// URL without "jdbc:", parameters and credentials, name = the table; a Kafka topic is namespace =
// kafka://first-bootstrap-server (or kafka://<cluster> when the dataset names its cluster:
// Dataset.Cluster), name = the topic. Key = namespace + "/" + name without its
// leading slash: "spark_catalog/sales.orders", "s3a://bucket/in/orders", "file/tmp/x". Catalog
// identifiers are case-insensitive in Spark, so table and view keys are lower-cased.
func Identify(d *events.Dataset) []Dataset {
	if d == nil {
		return nil
	}
	switch d.Kind {
	case "table", "view":
		catalog := d.Catalog
		if catalog == "" {
			catalog = "spark_catalog"
		}
		name := strings.Join(append(append([]string{}, d.Namespace...), d.Name), ".")
		ds := newDataset(strings.ToLower(catalog), strings.ToLower(name), d.Kind, d.Location)
		ds.Inferred = d.Inferred
		return []Dataset{ds}
	case "path":
		out := make([]Dataset, 0, len(d.Paths))
		for _, p := range d.Paths {
			ns, name := splitURI(p)
			out = append(out, newDataset(ns, name, "path", p))
		}
		return out
	case "jdbc":
		ns := jdbcNamespace(d.URL)
		name := d.Table
		if name == "" && d.SQL != "" {
			sum := sha256.Sum256([]byte(d.SQL))
			name = "query-" + hex.EncodeToString(sum[:6])
		}
		if name == "" {
			return nil
		}
		return []Dataset{newDataset(ns, name, "jdbc", "")}
	case "kafka":
		server, _, _ := strings.Cut(d.Servers, ",")
		ns := "kafka://" + cmp.Or(d.Cluster, strings.TrimSpace(server))
		if d.Pattern != "" {
			return []Dataset{newDataset(ns, d.Pattern, "kafka", "")}
		}
		out := make([]Dataset, 0, len(d.Topics))
		for _, t := range d.Topics {
			out = append(out, newDataset(ns, t, "kafka", ""))
		}
		return out
	case "other":
		if d.Description == "" {
			return nil
		}
		return []Dataset{newDataset("other", d.Description, "other", "")}
	}
	return nil // local, rdd and unknown kinds
}

// Named returns the dataset an OpenLineage-style identity (spec/Naming.md) stands for, keyed as
// Identify keys the listener's: a namespace of a file system (file, hdfs, s3, s3a, gs, abfss, ...)
// names a path (kind path, name with a leading and no trailing slash, location the path's URI);
// kafka:// a topic; anything else a table (a bare catalog name such as spark_catalog, with no
// scheme, holds case-insensitive identifiers and is lower-cased as Spark's are). So the
// OpenLineage identity of a path or a topic has the same key as the listener's.
func Named(namespace, name string) Dataset {
	switch kind := namespaceKind(namespace); kind {
	case "path":
		name = "/" + strings.Trim(name, "/")
		loc := namespace + name
		if !strings.Contains(namespace, "://") {
			loc = namespace + ":" + name
		}
		return newDataset(namespace, name, kind, loc)
	case "kafka", "result":
		return newDataset(namespace, name, kind, "")
	}
	if !strings.Contains(namespace, ":") {
		namespace, name = strings.ToLower(namespace), strings.ToLower(name)
	}
	return newDataset(namespace, name, "table", "")
}

// fileSystems are the URI schemes of file systems and object stores (Naming.md, "Data stores").
var fileSystems = map[string]bool{
	"file": true, "hdfs": true, "viewfs": true, "s3": true, "s3a": true, "s3n": true, "gs": true, "gcs": true,
	"abfs": true, "abfss": true, "wasb": true, "wasbs": true, "adl": true, "dbfs": true, "oss": true, "cos": true,
}

// namespaceKind tells what the datasets of an OpenLineage namespace are: path, kafka, result
// (ResultDataset's) or table.
func namespaceKind(namespace string) string {
	scheme, _, _ := strings.Cut(namespace, ":")
	scheme = strings.ToLower(scheme)
	switch {
	case fileSystems[scheme]:
		return "path"
	case scheme == "kafka":
		return "kafka"
	case namespace == resultNamespace:
		return "result"
	}
	return "table"
}

// FileSystem reports whether an OpenLineage namespace is a file system's or an object store's
// (its datasets are paths).
func FileSystem(namespace string) bool { return namespaceKind(namespace) == "path" }

func newDataset(namespace, name, kind, location string) Dataset {
	key := namespace + "/" + strings.TrimPrefix(name, "/")
	return Dataset{Key: key, Namespace: namespace, Name: name, Kind: kind, Location: location}
}

// ColumnKey is the key of a dataset's column. Spark resolves column names case-insensitively by
// default, so the name is lower-cased in the key (the Column keeps its spelling). A name with a
// dot or a backquote is quoted with backquotes, so that no column key is also the key of a
// struct field (FieldKey: "ds#address.city" is field city of column address).
func ColumnKey(datasetKey, column string) string {
	return datasetKey + "#" + strings.ToLower(quoteField(column))
}

// FieldKey is the key of struct field path (names from the column down, e.g. ["geo", "lat"]) of
// a dataset's column: the column's key, then each name, lower-cased and quoted as in ColumnKey,
// after a dot.
func FieldKey(datasetKey, column string, path ...string) string {
	k := ColumnKey(datasetKey, column)
	for _, p := range path {
		k += "." + strings.ToLower(quoteField(p))
	}
	return k
}

// splitURI splits a qualified path into an OpenLineage namespace and name:
// "file:/tmp/x" → ("file", "/tmp/x"), "s3a://bucket/p" → ("s3a://bucket", "/p").
func splitURI(p string) (string, string) {
	u, err := url.Parse(p)
	if err != nil || u.Scheme == "" {
		return "file", strings.TrimRight(p, "/")
	}
	name := strings.TrimRight(u.Path, "/")
	if name == "" {
		name = "/"
	}
	if u.Host == "" {
		return u.Scheme, name
	}
	return u.Scheme + "://" + u.Host, name
}

// jdbcNamespace turns "jdbc:postgresql://u:p@db:5432/shop?ssl=true" into "postgresql://db:5432/shop".
func jdbcNamespace(raw string) string {
	s := strings.TrimPrefix(raw, "jdbc:")
	if i := strings.IndexAny(s, "?;"); i >= 0 {
		s = s[:i]
	}
	if scheme, rest, ok := strings.Cut(s, "://"); ok {
		if at := strings.LastIndex(rest, "@"); at >= 0 {
			slash := strings.Index(rest, "/")
			if slash < 0 || at < slash {
				rest = rest[at+1:]
			}
		}
		s = scheme + "://" + rest
	}
	return s
}

// resultNamespace is the namespace of ResultDataset's datasets.
const resultNamespace = "result"

// ResultDataset is the dataset that stands for the result of a job that writes nothing (a
// collect, count or show that the listener published with publishReads): namespace "result",
// name "<job namespace>/<app name>/<action>-<hash of the result's column names>", kind "result".
// One per job and result shape: every run of the same check feeds the same dataset, and two
// checks of one job with different columns stay apart.
func ResultDataset(app events.App, action string, columns []string) Dataset {
	sum := sha256.Sum256([]byte(strings.ToLower(strings.Join(columns, "\x00"))))
	if action == "" {
		action = "result"
	}
	return Named(resultNamespace, app.Namespace+"/"+app.Name+"/"+action+"-"+hex.EncodeToString(sum[:6]))
}

// quoteField quotes a field name that contains a dot or a backquote, as Spark quotes identifiers.
func quoteField(name string) string {
	if !strings.ContainsAny(name, ".`") {
		return name
	}
	return "`" + strings.ReplaceAll(name, "`", "``") + "`"
}
