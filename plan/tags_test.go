package plan

import (
	"fmt"
	"testing"

	"github.com/colline/colline/events"
)

func TestCommentTags(t *testing.T) {
	for _, tc := range []struct{ comment, want string }{
		{"e-mail address #pii=email #gdpr", "[[pii email] [gdpr true]]"},
		{"#pii", "[[pii true]]"},
		{"ticket#123 is not a tag; (#sensitivity=high), [#a.b:c-d=x_y]", "[[sensitivity high] [a.b:c-d x_y]]"},
		{"# not a tag, nor ##this", "[]"},
		{"#pii=email,#pii=email", "[[pii email]]"},
		{"", "[]"},
	} {
		if got := fmt.Sprint(CommentTags(tc.comment)); got != tc.want {
			t.Errorf("CommentTags(%q) = %s, want %s", tc.comment, got, tc.want)
		}
	}
	for _, tc := range []struct{ value, want string }{
		{"pii=email, gdpr", "[[pii email] [gdpr true]]"},
		{" , pii , =x, a b=c", "[[pii true]]"},
	} {
		if got := fmt.Sprint(PropertyTags(tc.value)); got != tc.want {
			t.Errorf("PropertyTags(%q) = %s, want %s", tc.value, got, tc.want)
		}
	}
}

// TestCatalogTags: the tags of a table dataset as the listener sends them since 1.5 (a unit
// test's input; TestSparkDBTTags, e2e, runs the real listener): one set per table, from its
// comments and properties, also when empty; nothing from a dataset of an older listener.
func TestCatalogTags(t *testing.T) {
	env := &events.Envelope{Nodes: []events.Node{
		{Dataset: &events.Dataset{Kind: "table", Catalog: "spark_catalog", Namespace: []string{"crm"}, Name: "Customer",
			ColumnComments: map[string]string{"Email": "e-mail #pii=email"}, TagProperties: map[string]string{"colline.tags.name": "pii=name", "other": "x"}}},
		{Dataset: &events.Dataset{Kind: "table", Catalog: "spark_catalog", Namespace: []string{"crm"}, Name: "plain", ColumnComments: map[string]string{}, TagProperties: map[string]string{}}},
		{Dataset: &events.Dataset{Kind: "table", Catalog: "spark_catalog", Namespace: []string{"crm"}, Name: "old"}},
		{Write: &events.Write{Dataset: events.Dataset{Kind: "table", Catalog: "spark_catalog", Namespace: []string{"crm"}, Name: "customer",
			ColumnComments: map[string]string{}, TagProperties: map[string]string{}}}},
	}}
	got := fmt.Sprint(catalogTags(env))
	want := "[{spark_catalog/crm.customer spark [{spark_catalog/crm.customer#email pii email spark:comment} {spark_catalog/crm.customer#name pii name spark:property}]} {spark_catalog/crm.plain spark []}]"
	if got != want {
		t.Errorf("catalogTags\n got %s\nwant %s", got, want)
	}
}
