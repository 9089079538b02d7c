package openlineage

import (
	"encoding/json"
	"fmt"
)

// ColumnLineage is the columnLineage dataset facet (ColumnLineageDatasetFacet 1-2-0) of an output:
// per written field its input fields, and in Dataset the inputs the whole output depends on
// (filter, join, group, sort keys) when the producer reports them apart.
type ColumnLineage struct {
	Fields  map[string]FieldLineage `json:"fields"`
	Dataset []InputField            `json:"dataset"`
}

// FieldLineage is the lineage of one output field.
type FieldLineage struct {
	InputFields []InputField `json:"inputFields"`
	// Deprecated by the spec; kept to read older producers.
	TransformationType        string `json:"transformationType"`
	TransformationDescription string `json:"transformationDescription"`
}

// InputField is one input column of an output field (or of the whole output).
type InputField struct {
	Namespace       string           `json:"namespace"`
	Name            string           `json:"name"`
	Field           string           `json:"field"`
	Transformations []Transformation `json:"transformations"`
}

// Transformation is how an input field takes part: Type DIRECT or INDIRECT, Subtype IDENTITY,
// TRANSFORMATION, AGGREGATION, FILTER, JOIN, GROUP_BY, SORT, WINDOW, CONDITIONAL.
type Transformation struct {
	Type        string `json:"type"`
	Subtype     string `json:"subtype"`
	Description string `json:"description"`
	Masking     bool   `json:"masking"`
	// RowsFrom is colline's property (RowsFrom): a row-level dependency that decides only the
	// rows that come from these datasets (some UNION branches); absent: every row.
	RowsFrom []DatasetName `json:"rowsFrom"`
}

// DatasetName is an OpenLineage dataset identity.
type DatasetName struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
}

// Symlink is an alternative identity of a dataset (SymlinksDatasetFacet): typically the TABLE a
// path-named dataset is, which is how a path from one tool meets a table from another.
type Symlink struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	Type      string `json:"type"`
}

// SchemaField is a field of the schema dataset facet, with its nested struct fields.
type SchemaField struct {
	Name   string        `json:"name"`
	Type   string        `json:"type"`
	Fields []SchemaField `json:"fields,omitempty"`
}

// ColumnLineage decodes the dataset's columnLineage facet; nil when it has none.
func (d *Dataset) ColumnLineage() (*ColumnLineage, error) {
	var cl ColumnLineage
	ok, err := facet(d.Facets, "columnLineage", &cl)
	if !ok || err != nil {
		return nil, err
	}
	return &cl, nil
}

// Symlinks decodes the dataset's symlinks facet.
func (d *Dataset) Symlinks() ([]Symlink, error) {
	var s struct {
		Identifiers []Symlink `json:"identifiers"`
	}
	_, err := facet(d.Facets, "symlinks", &s)
	return s.Identifiers, err
}

// Schema decodes the dataset's schema facet (top-level fields).
func (d *Dataset) Schema() ([]SchemaField, error) {
	var s struct {
		Fields []SchemaField `json:"fields"`
	}
	_, err := facet(d.Facets, "schema", &s)
	return s.Fields, err
}

// TagField is a tag of the tags dataset facet (TagsDatasetFacet 1-0-0): Field names the column
// (dataset) it tags, "" for the dataset itself.
type TagField struct {
	Key    string `json:"key"`
	Value  string `json:"value"`
	Source string `json:"source,omitempty"`
	Field  string `json:"field,omitempty"`
}

// Tags decodes the dataset's tags facet; ok is false when it has none.
func (d *Dataset) Tags() (tags []TagField, ok bool, err error) {
	var s struct {
		Tags []TagField `json:"tags"`
	}
	ok, err = facet(d.Facets, "tags", &s)
	return s.Tags, ok, err
}

// SQL returns the query of the job's sql facet, "" when it has none.
func (j *Job) SQL() (string, error) {
	var s struct {
		Query string `json:"query"`
	}
	_, err := facet(j.Facets, "sql", &s)
	return s.Query, err
}

func facet(facets map[string]json.RawMessage, name string, v any) (bool, error) {
	raw, ok := facets[name]
	if !ok || string(raw) == "null" {
		return false, nil
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return true, fmt.Errorf("openlineage: facet %s: %w", name, err)
	}
	return true, nil
}
