package openlineage

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"path"
	"sort"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

//go:embed spec/OpenLineage.json spec/facets/*.json
var specFS embed.FS

// CoreSchemaID is the $id of the core schema events are validated against.
const CoreSchemaID = "https://openlineage.io/spec/2-0-2/OpenLineage.json"

// Validator checks events against the embedded OpenLineage schemas. It is safe for concurrent use.
type Validator struct {
	core   map[Kind]*jsonschema.Schema
	facets map[string]facetSchema // by file name, e.g. "ColumnLineageDatasetFacet.json"
}

type facetSchema struct {
	id    string // $id, e.g. https://openlineage.io/spec/facets/1-2-0/ColumnLineageDatasetFacet.json
	major string // "1"
	// defs are the file's facet definitions ($defs whose name ends in "Facet"), by name; most
	// files define one, named after the file (LineageFacet.json defines a dataset and a job facet)
	defs map[string]*jsonschema.Schema
	// doc is the file's own schema: a facets object, {"<facetName>": {...}}, as the spec's examples are
	doc *jsonschema.Schema
}

// Report says what validation covered: the standard facets checked against their own schema and
// the facets that were not (a producer's own facets, or a standard facet of another major version).
type Report struct {
	Kind      Kind
	Checked   []string    // JSON locations of facets validated against their schema, e.g. /outputs/0/facets/columnLineage
	Unchecked []Unchecked // sorted by location
}

// Unchecked is a facet validation could not check against a schema of its own.
type Unchecked struct {
	Location  string
	SchemaURL string
	Reason    string
}

// InvalidError is an event that does not conform to the spec. Problems name each failing JSON
// location (a JSON pointer into the event) with what is wrong there.
type InvalidError struct {
	Kind     Kind // "" when the kind could not be told
	Problems []Problem
}

// Problem is one failure of an invalid event.
type Problem struct {
	Location string // JSON pointer into the event, "" for the event itself
	Message  string
	Schema   string // the schema (or facet schema) $id that failed, without fragment
}

func (p Problem) String() string {
	loc := p.Location
	if loc == "" {
		loc = "/"
	}
	return loc + ": " + p.Message
}

func (e *InvalidError) Error() string {
	what := "event"
	if e.Kind != "" {
		what = string(e.Kind)
	}
	parts := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		parts[i] = p.String()
	}
	return fmt.Sprintf("openlineage: invalid %s: %s", what, strings.Join(parts, "; "))
}

// NewValidator compiles the embedded schemas.
func NewValidator() (*Validator, error) {
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	type file struct {
		name, id string
		defs     []string
	}
	var files []file
	add := func(p string) error {
		data, err := specFS.ReadFile(p)
		if err != nil {
			return err
		}
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
		if err != nil {
			return fmt.Errorf("openlineage: schema %s: %w", p, err)
		}
		id, _ := doc.(map[string]any)["$id"].(string)
		if id == "" {
			return fmt.Errorf("openlineage: schema %s has no $id", p)
		}
		if err := c.AddResource(id, doc); err != nil {
			return fmt.Errorf("openlineage: schema %s: %w", p, err)
		}
		var defs []string
		if m, ok := doc.(map[string]any)["$defs"].(map[string]any); ok {
			for d := range m {
				if strings.HasSuffix(d, "Facet") {
					defs = append(defs, d)
				}
			}
		}
		files = append(files, file{path.Base(p), id, defs})
		return nil
	}
	if err := add("spec/OpenLineage.json"); err != nil {
		return nil, err
	}
	entries, err := specFS.ReadDir("spec/facets")
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		if err := add("spec/facets/" + e.Name()); err != nil {
			return nil, err
		}
	}
	v := &Validator{core: map[Kind]*jsonschema.Schema{}, facets: map[string]facetSchema{}}
	for _, k := range []Kind{RunEvent, DatasetEvent, JobEvent} {
		s, err := c.Compile(CoreSchemaID + "#/$defs/" + string(k))
		if err != nil {
			return nil, fmt.Errorf("openlineage: compile %s: %w", k, err)
		}
		v.core[k] = s
	}
	for _, f := range files {
		if f.name == "OpenLineage.json" {
			continue
		}
		ver, _ := versionOf(f.id)
		major, _, _ := strings.Cut(ver, "-")
		doc, err := c.Compile(f.id)
		if err != nil {
			return nil, fmt.Errorf("openlineage: compile facet %s: %w", f.name, err)
		}
		fs := facetSchema{id: f.id, major: major, defs: map[string]*jsonschema.Schema{}, doc: doc}
		for _, def := range f.defs {
			s, err := c.Compile(f.id + "#/$defs/" + def)
			if err != nil {
				return nil, fmt.Errorf("openlineage: compile facet %s#/$defs/%s: %w", f.name, def, err)
			}
			fs.defs[def] = s
		}
		v.facets[f.name] = fs
	}
	return v, nil
}

// Decode validates the event and decodes it. An event that does not conform returns an
// *InvalidError (and no event); the Report lists what was checked.
func (v *Validator) Decode(data []byte) (*Event, *Report, error) {
	rep, err := v.Validate(data)
	if err != nil {
		return nil, rep, err
	}
	e, err := Decode(data)
	return e, rep, err
}

// Validate checks one event: the core schema of its kind, then each standard facet against its
// own schema. Bytes that are not JSON fail with a plain error; a non-conforming event with an
// *InvalidError that lists every problem found.
func (v *Validator) Validate(data []byte) (*Report, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("openlineage: %w", jsonError(data, err))
	}
	obj, ok := doc.(map[string]any)
	if !ok {
		return nil, &InvalidError{Problems: []Problem{{Message: fmt.Sprintf("want an event object, got %s", typeName(doc))}}}
	}
	k, err := kindOf(str(obj["schemaURL"]), func(f string) bool { return obj[f] != nil })
	if err != nil {
		return nil, &InvalidError{Problems: []Problem{{Message: "not an OpenLineage event: no run, job or dataset, and no event kind in schemaURL"}}}
	}
	rep := &Report{Kind: k}
	inv := &InvalidError{Kind: k}
	if err := v.core[k].Validate(doc); err != nil {
		inv.Problems = append(inv.Problems, problems("", CoreSchemaID, err)...)
	}
	for _, f := range facetsOf(obj) {
		if d, _ := f.value["_deleted"].(bool); d {
			continue
		}
		url := str(f.value["_schemaURL"])
		name, ver, def, ok := facetFile(url)
		fs, known := v.facets[name]
		if !ok || !known {
			rep.Unchecked = append(rep.Unchecked, Unchecked{f.loc, url, "not a facet of the spec"})
			continue
		}
		if !strings.HasPrefix(ver, fs.major+"-") {
			rep.Unchecked = append(rep.Unchecked, Unchecked{f.loc, url, "spec holds " + path.Base(path.Dir(fs.id)) + ", another major version"})
			continue
		}
		schema := fs.defs[def]
		if schema == nil && len(fs.defs) == 1 {
			for _, s := range fs.defs {
				schema = s
			}
		}
		if schema == nil {
			rep.Unchecked = append(rep.Unchecked, Unchecked{f.loc, url, "no facet $defs/" + def + " in " + name})
			continue
		}
		rep.Checked = append(rep.Checked, f.loc)
		if err := schema.Validate(f.value); err != nil {
			inv.Problems = append(inv.Problems, problems(f.loc, fs.id, err)...)
		}
	}
	// the core schema and a facet's own can report the same problem (a facet without _producer)
	seen := map[string]bool{}
	uniq := inv.Problems[:0]
	for _, p := range inv.Problems {
		if !seen[p.String()] {
			seen[p.String()] = true
			uniq = append(uniq, p)
		}
	}
	inv.Problems = uniq
	sort.Strings(rep.Checked)
	sort.Slice(rep.Unchecked, func(i, j int) bool { return rep.Unchecked[i].Location < rep.Unchecked[j].Location })
	if len(inv.Problems) > 0 {
		return rep, inv
	}
	return rep, nil
}

type located struct {
	loc   string
	value map[string]any
}

// facetsOf lists every facet object of the event with its JSON location.
func facetsOf(obj map[string]any) []located {
	var out []located
	collect := func(prefix string, facets any) {
		m, _ := facets.(map[string]any)
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if f, ok := m[k].(map[string]any); ok {
				out = append(out, located{prefix + "/" + escape(k), f})
			}
		}
	}
	if r, ok := obj["run"].(map[string]any); ok {
		collect("/run/facets", r["facets"])
	}
	if j, ok := obj["job"].(map[string]any); ok {
		collect("/job/facets", j["facets"])
	}
	for _, side := range []string{"inputs", "outputs"} {
		list, _ := obj[side].([]any)
		for i, d := range list {
			ds, _ := d.(map[string]any)
			for _, fk := range []string{"facets", "inputFacets", "outputFacets"} {
				collect(fmt.Sprintf("/%s/%d/%s", side, i, fk), ds[fk])
			}
		}
	}
	if d, ok := obj["dataset"].(map[string]any); ok {
		collect("/dataset/facets", d["facets"])
	}
	return out
}

// facetFile splits a facet _schemaURL such as
// https://openlineage.io/spec/facets/1-2-0/ColumnLineageDatasetFacet.json#/$defs/ColumnLineageDatasetFacet
// into ("ColumnLineageDatasetFacet.json", "1-2-0", "ColumnLineageDatasetFacet"). Without a
// fragment the definition is the one named after the file.
func facetFile(url string) (name, version, def string, ok bool) {
	base, frag, _ := strings.Cut(url, "#")
	if !strings.Contains(base, "/spec/facets/") {
		return "", "", "", false
	}
	version, ok = versionOf(base)
	name = path.Base(base)
	def = strings.TrimPrefix(frag, "/$defs/")
	if def == "" || strings.Contains(def, "/") {
		def = strings.TrimSuffix(name, ".json")
	}
	return name, version, def, ok
}

// versionOf returns the version directory of a schema $id: ".../facets/1-2-0/X.json" → "1-2-0".
func versionOf(id string) (string, bool) {
	dir := path.Base(path.Dir(id))
	parts := strings.Split(dir, "-")
	if len(parts) != 3 {
		return "", false
	}
	return dir, true
}

// problems flattens a validation error into its leaves, each at a JSON pointer into the event.
func problems(prefix, schemaID string, err error) []Problem {
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return []Problem{{Location: prefix, Message: err.Error(), Schema: schemaID}}
	}
	var out []Problem
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) > 0 {
			for _, c := range e.Causes {
				walk(c)
			}
			return
		}
		// a leaf renders as "at '/x/y': message"; keep the message
		msg := (&jsonschema.ValidationError{InstanceLocation: e.InstanceLocation, ErrorKind: e.ErrorKind}).Error()
		if _, after, ok := strings.Cut(msg, "': "); ok {
			msg = after
		}
		out = append(out, Problem{Location: prefix + pointer(e.InstanceLocation), Message: msg, Schema: schemaID})
	}
	walk(ve)
	return out
}

func pointer(tokens []string) string {
	var sb strings.Builder
	for _, t := range tokens {
		sb.WriteString("/" + escape(t))
	}
	return sb.String()
}

func escape(token string) string {
	return strings.ReplaceAll(strings.ReplaceAll(token, "~", "~0"), "/", "~1")
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

func typeName(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case []any:
		return "an array"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case map[string]any:
		return "an object"
	default:
		return "a number"
	}
}
