package tags

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/colline/colline/plan"
)

// dbt's manifest.json (target/manifest.json, written by every dbt run, build, compile and
// parse): what tags read of it. Columns carry tags and meta at the top level and, since dbt
// 1.10, under config too; both are read.
type manifest struct {
	Metadata struct {
		ProjectName string `json:"project_name"`
		AdapterType string `json:"adapter_type"`
	} `json:"metadata"`
	Nodes   map[string]dbtNode `json:"nodes"`
	Sources map[string]dbtNode `json:"sources"`
}

type dbtNode struct {
	ResourceType string               `json:"resource_type"`
	Database     string               `json:"database"`
	Schema       string               `json:"schema"`
	Alias        string               `json:"alias"`
	Identifier   string               `json:"identifier"`
	Name         string               `json:"name"`
	Columns      map[string]dbtColumn `json:"columns"`
}

type dbtColumn struct {
	Name   string         `json:"name"`
	Tags   []string       `json:"tags"`
	Meta   map[string]any `json:"meta"`
	Config struct {
		Tags []string       `json:"tags"`
		Meta map[string]any `json:"meta"`
	} `json:"config"`
}

// maxManifestBytes bounds a manifest (large projects write tens of megabytes).
const maxManifestBytes = 512 << 20

// ReadManifest reads the column tags and meta of a dbt project's manifest: for every column of a
// model, seed, snapshot or source, each tag becomes a tag of that key with the value "true", and
// each meta entry with a scalar value (a string, number or boolean) a tag of its key and value.
// Source: "dbt:<project name>". dataset turns a relation's name as dbt-ol names it
// (database.schema.identifier, without the parts the adapter leaves empty) into a colline
// dataset key: the namespace dbt-ol gives the project's datasets, and the accept side's aliases
// (openlineage.Names.Dataset). The rules name one column each. Meta entries of other kinds (a
// list, a map) are left out, and listed in the returned notes.
func ReadManifest(r io.Reader, dataset func(name string) string) (*File, []string, error) {
	var m manifest
	dec := json.NewDecoder(io.LimitReader(r, maxManifestBytes))
	if err := dec.Decode(&m); err != nil {
		return nil, nil, fmt.Errorf("dbt manifest: %w", err)
	}
	if m.Metadata.ProjectName == "" {
		return nil, nil, fmt.Errorf("dbt manifest: no metadata.project_name: not a dbt manifest.json (target/manifest.json)")
	}
	f := &File{Source: SourceDBT + m.Metadata.ProjectName}
	var notes []string
	add := func(id string, n dbtNode) {
		ident := n.Identifier
		if n.Alias != "" {
			ident = n.Alias
		}
		if ident == "" {
			ident = n.Name
		}
		var parts []string
		for _, p := range []string{n.Database, n.Schema, ident} {
			if p != "" {
				parts = append(parts, p)
			}
		}
		ds := dataset(strings.Join(parts, "."))
		for _, cname := range slices.Sorted(maps.Keys(n.Columns)) {
			c := n.Columns[cname]
			name := c.Name
			if name == "" {
				name = cname
			}
			col := strings.TrimPrefix(plan.ColumnKey(ds, name), ds+"#")
			var tags []Tag
			for _, t := range slices.Concat(c.Tags, c.Config.Tags) {
				tags = append(tags, Tag{Key: t, Value: "true"})
			}
			for _, meta := range []map[string]any{c.Meta, c.Config.Meta} {
				for _, k := range slices.Sorted(maps.Keys(meta)) {
					v, ok := scalar(meta[k])
					if !ok {
						notes = append(notes, fmt.Sprintf("%s column %s: meta %s is not a string, number or boolean; left out", id, name, k))
						continue
					}
					tags = append(tags, Tag{Key: k, Value: v})
				}
			}
			for _, t := range tags {
				t.Source = f.Source
				if err := checkTag(t.Key, t.Value); err != nil {
					notes = append(notes, fmt.Sprintf("%s column %s: %v; left out", id, name, err))
					continue
				}
				r := Rule{Tag: t, Dataset: Glob(ds), Column: Glob(col)}
				if !slices.Contains(f.Rules, r) {
					f.Rules = append(f.Rules, r)
				}
			}
		}
	}
	for _, id := range slices.Sorted(maps.Keys(m.Nodes)) {
		switch n := m.Nodes[id]; n.ResourceType {
		case "model", "seed", "snapshot":
			add(id, n)
		}
	}
	for _, id := range slices.Sorted(maps.Keys(m.Sources)) {
		add(id, m.Sources[id])
	}
	return f, notes, nil
}

func scalar(v any) (string, bool) {
	switch x := v.(type) {
	case string:
		return x, true
	case bool:
		return strconv.FormatBool(x), true
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64), true
	}
	return "", false
}
