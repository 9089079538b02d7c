package tags

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"

	"go.yaml.in/yaml/v3"
)

// FileVersion is the version of the tag file format this package reads.
const FileVersion = 1

// File is a tag file (docs/tags.md): the settings of tags and rules that tag columns, which a
// team keeps in git and loads with `colline tags load`.
//
//	version: 1
//	source: customer-pii          # optional; default: the file's path as given
//	tags:
//	  pii:
//	    description: personal data
//	    aggregation: pass         # pass (default) or stop
//	    allowed: [spark_catalog/crm.*]
//	columns:
//	  - dataset: spark_catalog/tpcds.customer
//	    columns: [c_first_name, c_last_name]
//	    tags: {pii: name}
type File struct {
	Source   string   // "file:" + the file's source name
	Policies []Policy // in the file's order
	Rules    []Rule   // one per (entry, column pattern, tag), in the file's order
}

type fileYAML struct {
	Version int                   `yaml:"version"`
	Source  string                `yaml:"source"`
	Tags    map[string]policyYAML `yaml:"tags"`
	Columns []entryYAML           `yaml:"columns"`
}

type policyYAML struct {
	Description string   `yaml:"description"`
	Aggregation string   `yaml:"aggregation"`
	Allowed     []string `yaml:"allowed"`
}

type entryYAML struct {
	Dataset string            `yaml:"dataset"`
	Column  string            `yaml:"column"`
	Columns []string          `yaml:"columns"`
	Tags    map[string]string `yaml:"tags"`
}

// maxFileBytes bounds a tag file.
const maxFileBytes = 16 << 20

// ReadFile reads a tag file from r; name is its path as given, for errors and the default source.
// Errors name the file and the line.
func ReadFile(name string, r io.Reader) (*File, error) {
	data, err := io.ReadAll(io.LimitReader(r, maxFileBytes+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if len(data) > maxFileBytes {
		return nil, fmt.Errorf("%s: larger than %d MB", name, maxFileBytes>>20)
	}
	return ParseFile(name, data)
}

// ParseFile parses a tag file's content (see ReadFile).
func ParseFile(name string, data []byte) (*File, error) {
	var doc fileYAML
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("%s: empty; a tag file starts with version: %d", name, FileVersion)
		}
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	var root yaml.Node // the same document again, for the lines of the errors below
	if err := yaml.Unmarshal(data, &root); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	at := lines(&root)
	if doc.Version != FileVersion {
		return nil, fmt.Errorf("%s:%d: version %d; this colline reads version %d (version: %d)", name, at("version"), doc.Version, FileVersion, FileVersion)
	}
	f := &File{Source: SourceFile + strings.TrimSpace(doc.Source)}
	if doc.Source == "" {
		f.Source = SourceFile + name
	}
	var errs []error
	for _, key := range keysInOrder(&root, "tags") {
		p := doc.Tags[key]
		pol := Policy{Key: key, Description: p.Description, Aggregation: p.Aggregation, Source: f.Source}
		if pol.Aggregation == "" {
			pol.Aggregation = AggregationPass
		}
		if err := checkTag(key, ""); err != nil {
			errs = append(errs, fmt.Errorf("%s:%d: tags: %w", name, at("tags", key), err))
		}
		if pol.Aggregation != AggregationPass && pol.Aggregation != AggregationStop {
			errs = append(errs, fmt.Errorf("%s:%d: tags: %s: aggregation %q: use pass or stop", name, at("tags", key), key, p.Aggregation))
		}
		for _, a := range p.Allowed {
			if strings.TrimSpace(a) == "" {
				errs = append(errs, fmt.Errorf("%s:%d: tags: %s: an empty allowed pattern", name, at("tags", key), key))
			}
			pol.Allowed = append(pol.Allowed, Glob(a))
		}
		f.Policies = append(f.Policies, pol)
	}
	for i, e := range doc.Columns {
		line := at("columns", fmt.Sprint(i))
		where := fmt.Sprintf("%s:%d: columns[%d]", name, line, i)
		cols := e.Columns
		if e.Column != "" {
			cols = append([]string{e.Column}, cols...)
		}
		switch {
		case strings.TrimSpace(e.Dataset) == "":
			errs = append(errs, fmt.Errorf("%s: no dataset (a dataset key or pattern, such as spark_catalog/crm.*)", where))
			continue
		case len(cols) == 0:
			errs = append(errs, fmt.Errorf("%s: no column or columns", where))
			continue
		case len(e.Tags) == 0:
			errs = append(errs, fmt.Errorf("%s: no tags (such as tags: {pii: email})", where))
			continue
		}
		keys := keysInOrder(&root, "columns", fmt.Sprint(i), "tags")
		for _, c := range cols {
			if strings.TrimSpace(c) == "" {
				errs = append(errs, fmt.Errorf("%s: an empty column pattern", where))
				continue
			}
			for _, k := range keys {
				v := e.Tags[k]
				if v == "" {
					v = "true"
				}
				if err := checkTag(k, v); err != nil {
					errs = append(errs, fmt.Errorf("%s: %w", where, err))
					continue
				}
				f.Rules = append(f.Rules, Rule{Tag: Tag{Key: k, Value: v, Source: f.Source}, Dataset: Glob(e.Dataset), Column: Glob(strings.ToLower(c))})
			}
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return f, nil
}

// lines returns a function giving the line of the node at a path of mapping keys and sequence
// indexes in the document root (the closest line found when the path stops early).
func lines(root *yaml.Node) func(path ...string) int {
	return func(path ...string) int {
		n := root
		if n.Kind == yaml.DocumentNode && len(n.Content) > 0 {
			n = n.Content[0]
		}
		line := n.Line
		for _, p := range path {
			next := child(n, p)
			if next == nil {
				break
			}
			n, line = next, next.Line
		}
		return line
	}
}

// child is the value under key p of a mapping, or item p of a sequence; for a mapping's key the
// line is the key's.
func child(n *yaml.Node, p string) *yaml.Node {
	switch n.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == p {
				v := *n.Content[i+1]
				v.Line = n.Content[i].Line
				return &v
			}
		}
	case yaml.SequenceNode:
		var i int
		if _, err := fmt.Sscan(p, &i); err == nil && i >= 0 && i < len(n.Content) {
			return n.Content[i]
		}
	}
	return nil
}

// keysInOrder returns the keys of the mapping at path, in the file's order (a Go map has none).
func keysInOrder(root *yaml.Node, path ...string) []string {
	n := root
	if n.Kind == yaml.DocumentNode && len(n.Content) > 0 {
		n = n.Content[0]
	}
	for _, p := range path {
		if n = child(n, p); n == nil {
			return nil
		}
	}
	if n.Kind != yaml.MappingNode {
		return nil
	}
	var out []string
	for i := 0; i+1 < len(n.Content); i += 2 {
		out = append(out, n.Content[i].Value)
	}
	return out
}
