package plan

import (
	"maps"
	"regexp"
	"slices"
	"strings"

	"github.com/colline/colline/events"
)

// DatasetTags are the column tags an event gives one dataset: all of those its source declares
// for the dataset now, so that a tag missing from a newer event has been removed. The graph keeps
// them where they were set (package tags follows them downstream).
type DatasetTags struct {
	Dataset string // Dataset.Key
	Source  string // the set's source: SparkTags for a listener event, "openlineage" for a TagsDatasetFacet
	Tags    []ColumnTag
}

// ColumnTag is one tag of one column.
type ColumnTag struct {
	Column string // Column.Key
	Key    string
	Value  string // "true" when the source gives none
	Source string // the tag's own source: "spark:comment", "spark:property", "openlineage[:<facet source>]"
}

// SparkTags is the source of the tags Spark's catalog gives a table.
const SparkTags = "spark"

// TagPropertyPrefix starts the table properties that tag columns: colline.tags.<column> =
// 'pii=email, gdpr'.
const TagPropertyPrefix = "colline.tags."

// commentTag is a tag in a column comment: #key or #key=value, the key of letters, digits and
// _ . : -, the value up to the next white space, comma, semicolon or closing bracket; after the
// start, white space or an opening bracket (so that "ticket#123" is no tag).
var commentTag = regexp.MustCompile(`(?:^|[\s(\[,;])#([\p{L}\p{N}_.:\-]{1,100})(?:=([^\s,#;)\]]{1,200}))?`)

// CommentTags returns the tags of a column comment ("e-mail address #pii=email #gdpr": pii=email
// and gdpr=true).
func CommentTags(comment string) [][2]string {
	var out [][2]string
	for _, m := range commentTag.FindAllStringSubmatch(comment, -1) {
		t := [2]string{m[1], m[2]}
		if t[1] == "" {
			t[1] = "true"
		}
		if !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	return out
}

// PropertyTags returns the tags of a colline.tags.<column> table property's value: key[=value]
// items separated by commas ("pii=email, gdpr").
func PropertyTags(value string) [][2]string {
	var out [][2]string
	for _, item := range strings.Split(value, ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(item), "=")
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if k == "" || len(k) > 100 || len(v) > 200 || strings.ContainsAny(k, " \t\n=#") {
			continue
		}
		if v == "" {
			v = "true"
		}
		if t := [2]string{k, v}; !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	return out
}

// catalogTags returns the tags Spark's catalog gives the tables of an event (schema 1.5: a
// table dataset's columnComments and tagProperties, which the listener sends, possibly empty,
// for every table it read the catalog entry of), one set per table. Events of older listeners
// say nothing, which is not "no tags": they yield no set.
func catalogTags(env *events.Envelope) []DatasetTags {
	var out []DatasetTags
	seen := map[string]bool{}
	add := func(d *events.Dataset) {
		if d == nil || d.Kind != "table" || d.ColumnComments == nil && d.TagProperties == nil {
			return
		}
		ids := Identify(d)
		if len(ids) == 0 || seen[ids[0].Key] {
			return
		}
		key := ids[0].Key
		seen[key] = true
		dt := DatasetTags{Dataset: key, Source: SparkTags}
		for _, col := range slices.Sorted(maps.Keys(d.ColumnComments)) {
			for _, t := range CommentTags(d.ColumnComments[col]) {
				dt.Tags = append(dt.Tags, ColumnTag{Column: ColumnKey(key, col), Key: t[0], Value: t[1], Source: SparkTags + ":comment"})
			}
		}
		for _, p := range slices.Sorted(maps.Keys(d.TagProperties)) {
			col, ok := strings.CutPrefix(p, TagPropertyPrefix)
			if !ok || col == "" {
				continue
			}
			for _, t := range PropertyTags(d.TagProperties[p]) {
				dt.Tags = append(dt.Tags, ColumnTag{Column: ColumnKey(key, col), Key: t[0], Value: t[1], Source: SparkTags + ":property"})
			}
		}
		out = append(out, dt)
	}
	for i := range env.Nodes {
		n := &env.Nodes[i]
		add(n.Dataset)
		if n.Write != nil {
			add(&n.Write.Dataset)
		}
	}
	return out
}
