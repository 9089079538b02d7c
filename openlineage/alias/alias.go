// Package alias parses what makes one dataset of the names tools and jobs give it: dataset key
// aliases (the COLLINE_OPENLINEAGE_ALIASES syntax), rules that rewrite the start of a dataset
// key, so that a tool naming a table its own way (dbt-duckdb's view of Spark's lake, Trino's hive
// catalog) lands on the key colline gives it; and Kafka clusters (COLLINE_KAFKA_CLUSTERS), so
// that a topic named through any server of its cluster is one dataset. It is a package of its own
// so that the configuration can check the syntax without the mapping's dependencies.
package alias

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// Rule rewrites dataset keys that start with From so that they start with To. To is a colline
// key prefix: a namespace, "/", and the start of a name ("spark_catalog/lake.").
type Rule struct{ From, To string }

// Parse reads rules written "from=to", separated by commas or white space, and returns them
// longest From first. The To of each must have a "/" after its namespace.
func Parse(s string) ([]Rule, error) {
	var out []Rule
	for _, f := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' || r == '\n' || r == '\t' }) {
		from, to, ok := strings.Cut(f, "=")
		if !ok || from == "" || to == "" {
			return nil, fmt.Errorf("alias %q: want from=to, two dataset key prefixes", f)
		}
		if _, _, ok := SplitKey(to); !ok {
			return nil, fmt.Errorf("alias %q: %q has no namespace: want namespace/name-prefix, such as spark_catalog/lake.", f, to)
		}
		out = append(out, Rule{From: from, To: to})
	}
	slices.SortStableFunc(out, func(a, b Rule) int { return cmp.Compare(len(b.From), len(a.From)) })
	return out, nil
}

// SplitKey splits a key prefix into its namespace and name prefix: the namespace ends at the
// first "/" after its "scheme://authority", if it has one.
func SplitKey(key string) (namespace, name string, ok bool) {
	start := 0
	if i := strings.Index(key, "://"); i >= 0 {
		start = i + 3
	}
	j := strings.IndexByte(key[start:], '/')
	if j < 0 || start+j == 0 {
		return "", "", false
	}
	return key[:start+j], key[start+j+1:], true
}

// Clusters names the Kafka cluster of each bootstrap server (COLLINE_KAFKA_CLUSTERS): a topic is
// one dataset, kafka://<cluster>/<topic>, whichever of its cluster's servers a job named. Keys
// are host:port, lower-cased.
type Clusters map[string]string

// ParseClusters reads clusters written "<cluster>=<host:port>[,<host:port>…]", separated by
// white space or semicolons: prod=k1:9092,k2:9092 dev=dk1:9092. A cluster is named best by its
// cluster id (kafka-cluster.sh cluster-id), which never changes; a server may belong to one
// cluster only.
func ParseClusters(s string) (Clusters, error) {
	out := Clusters{}
	for _, f := range strings.FieldsFunc(s, func(r rune) bool { return r == ';' || r == ' ' || r == '\n' || r == '\t' }) {
		name, servers, ok := strings.Cut(f, "=")
		if !ok || name == "" || servers == "" {
			return nil, fmt.Errorf("cluster %q: want <cluster>=<host:port>[,<host:port>…]", f)
		}
		if strings.ContainsAny(name, "/,:") {
			return nil, fmt.Errorf("cluster %q: the name %q may not hold / , or :", f, name)
		}
		for _, srv := range strings.Split(servers, ",") {
			srv = strings.ToLower(strings.TrimSpace(srv))
			host, port, ok := strings.Cut(srv, ":")
			if !ok || host == "" || port == "" || strings.ContainsAny(srv, "/ ") {
				return nil, fmt.Errorf("cluster %q: %q is not host:port", f, srv)
			}
			if other, dup := out[srv]; dup && other != name {
				return nil, fmt.Errorf("cluster %q: %s is already a server of cluster %q", f, srv, other)
			}
			out[srv] = name
		}
	}
	return out, nil
}

// Of returns the cluster of a bootstrap server list as a job gives it (comma-separated), by the
// first of its servers that has one; "" when none has.
func (c Clusters) Of(servers string) string {
	for _, srv := range strings.Split(servers, ",") {
		if name, ok := c[strings.ToLower(strings.TrimSpace(strings.TrimPrefix(srv, "kafka://")))]; ok {
			return name
		}
	}
	return ""
}
