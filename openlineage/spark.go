package openlineage

import (
	"cmp"
	"encoding/json"
	"fmt"
	"path"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/colline/colline/events"
	"github.com/colline/colline/plan"
	"github.com/colline/colline/record"
)

// ProducerURI names colline as the producer of the events it emits.
const ProducerURI = "https://github.com/colline/colline"

// DegradedFacet is the run facet of an event whose column lineage the listener dropped.
const DegradedFacet = "colline_degraded"

// runNamespace is the UUID namespace of the run ids colline derives (RFC 4122 name-based, SHA-1).
var runNamespace = uuid.NewSHA1(uuid.NameSpaceURL, []byte(ProducerURI))

// RunID is the stable runId of a listener event: a name-based UUID of its event id, the same on
// every emission and replay, so that receivers merge repeats.
func RunID(eventID string) string {
	return uuid.NewSHA1(runNamespace, []byte("event:"+eventID)).String()
}

// AppRunID is the stable runId of a Spark application (the parent of its queries' runs).
func AppRunID(appID string) string { return uuid.NewSHA1(runNamespace, []byte("app:"+appID)).String() }

// FromSpark returns the OpenLineage RunEvent of one listener event and the lineage colline
// extracted from it (docs/openlineage.md, "Emit"): COMPLETE for a query that succeeded, FAIL
// (with the errorMessage facet) for one that failed, at the query's end; run id RunID(event id),
// parent the application (job = the app name, run id AppRunID(app id)); job
// "<app name>.<first dataset written>" in the app's namespace with the jobType facet (and sql when
// the text is known); inputs and outputs with their schema, each output with its columnLineage
// (fields from the column edges, dataset from the row-level dependencies) and lifecycleStateChange
// (OVERWRITE, and DROP, TRUNCATE, RENAME from DDL). Datasets are named as colline names them.
// Facets are written at the versions of the embedded spec, so the event validates against it.
func FromSpark(env *events.Envelope, lin *plan.Lineage) ([]byte, error) {
	return FromSparkTagged(env, lin, nil)
}

// FromSparkTagged is FromSpark with the tags the written columns carry (by column key; colline
// follows them along lineage, docs/tags.md): each output gets a tags facet (TagsDatasetFacet)
// with them, field-level, each with its source, so that a receiver (Marquez, DataHub) shows them.
func FromSparkTagged(env *events.Envelope, lin *plan.Lineage, tags map[string][]TagField) ([]byte, error) {
	urls, err := facetURLs()
	if err != nil {
		return nil, err
	}
	f := func(file string, fields map[string]any) map[string]any {
		fields["_producer"] = ProducerURI
		fields["_schemaURL"] = urls[file]
		return fields
	}
	t, err := record.EventTime(env)
	if err != nil {
		return nil, fmt.Errorf("openlineage: %w", err)
	}
	eventType := Complete
	if env.Query.Status != "success" {
		eventType = Fail
	}

	parent := map[string]any{
		"run": map[string]any{"runId": AppRunID(env.App.ID)},
		"job": map[string]any{"namespace": env.App.Namespace, "name": env.App.Name},
	}
	if st := env.Query.Stream; st != nil && st.RunID != "" && env.Query.FuncName != "stream" {
		// a write of a foreachBatch micro-batch: its parent is the streaming query's run, which
		// the stream's own event (eventId = run id) emitted
		parent = map[string]any{
			"run": map[string]any{"runId": RunID(st.RunID)},
			"job": map[string]any{"namespace": env.App.Namespace, "name": streamJobName(env.App.Name, st)},
		}
	}
	// the scheduler's run above the application (event parent, since 1.5): the top of the
	// hierarchy is the facet's root, as openlineage-spark sets it (the spec wants a UUID run id)
	if top := rootOf(env.Parent); top != nil && uuid.Validate(top.RunID) == nil {
		parent["root"] = map[string]any{
			"run": map[string]any{"runId": top.RunID},
			"job": map[string]any{"namespace": top.Namespace, "name": top.Name},
		}
	}
	runFacets := map[string]any{"parent": f("ParentRunFacet.json", parent)}
	if env.Producer.Spark != "" {
		runFacets["processing_engine"] = f("ProcessingEngineRunFacet.json", map[string]any{
			"version": env.Producer.Spark, "name": "spark", "openlineageAdapterVersion": env.Producer.Version,
		})
	}
	if lin.Degraded {
		// a producer facet (no schema in the spec): the listener degraded the event to fit its
		// size cap, so outputs carry no columnLineage; reads, writes and columns are exact
		runFacets[DegradedFacet] = map[string]any{
			"_producer": ProducerURI, "_schemaURL": ProducerURI + "/blob/main/docs/openlineage.md#degraded-events",
			"columnLineage": "missing",
			"message":       "column lineage missing: the listener degraded this event to fit its size cap",
		}
	}
	if eventType == Fail && env.Query.Error != "" {
		runFacets["errorMessage"] = f("ErrorMessageRunFacet.json", map[string]any{"message": env.Query.Error, "programmingLanguage": "JAVA"})
	}
	processing := "BATCH"
	if env.Query.FuncName == "stream" {
		processing = "STREAMING"
	}
	jobFacets := map[string]any{
		"jobType": f("JobTypeJobFacet.json", map[string]any{"processingType": processing, "integration": "SPARK", "jobType": "SQL_JOB"}),
	}

	cols := map[string][2]string{} // column key → dataset key, column name
	sets := map[string]plan.Dataset{}
	index := func(d plan.Dataset) {
		if _, ok := sets[d.Key]; !ok {
			sets[d.Key] = d
		}
		for _, c := range d.Columns {
			cols[c.Key] = [2]string{d.Key, c.Name}
		}
	}
	for _, d := range lin.Reads {
		index(d)
	}
	for _, w := range lin.Writes {
		index(w.Dataset)
	}
	input := func(colKey string, ts []plan.Transformation) (map[string]any, bool) {
		c, ok := cols[colKey]
		if !ok {
			return nil, false
		}
		d := sets[c[0]]
		var trs []map[string]any
		for _, x := range ts {
			tr := map[string]any{"type": x.Type, "subtype": x.Subtype, "masking": x.Masking}
			if x.Expr != "" {
				tr["description"] = x.Expr
			}
			if rows := rowsFrom(x, sets); rows != nil {
				tr[RowsFrom] = rows
			}
			trs = append(trs, tr)
		}
		return map[string]any{"namespace": d.Namespace, "name": d.Name, "field": c[1], "transformations": trs}, true
	}
	// schema lists a dataset's columns, each struct field nested under its parent (fields), with
	// its own name within the parent; columnLineage names a field by its dotted path.
	schema := func(d plan.Dataset) map[string]any {
		nodes := map[string]map[string]any{} // by column key
		paths := map[string]string{}         // column key → dotted path (Column.Name)
		var fields []map[string]any
		for _, c := range d.Columns {
			field := map[string]any{"name": c.Name}
			if c.Type != "" {
				field["type"] = c.Type
			}
			nodes[c.Key], paths[c.Key] = field, c.Name
			parent := nodes[c.Parent]
			if parent == nil {
				fields = append(fields, field)
				continue
			}
			field["name"] = strings.TrimPrefix(c.Name, paths[c.Parent]+".")
			sub, _ := parent["fields"].([]map[string]any)
			parent["fields"] = append(sub, field)
		}
		return f("SchemaDatasetFacet.json", map[string]any{"fields": fields})
	}

	var inputs, outputs []map[string]any
	for _, d := range lin.Reads {
		ds := map[string]any{"namespace": d.Namespace, "name": d.Name}
		if len(d.Columns) > 0 {
			ds["facets"] = map[string]any{"schema": schema(d)}
		}
		inputs = append(inputs, ds)
	}
	for _, w := range lin.Writes {
		facets := map[string]any{}
		if len(w.Columns) > 0 {
			facets["schema"] = schema(w.Dataset)
		}
		fields := map[string]any{}
		for _, e := range lin.Edges {
			tc, ok := cols[e.Target]
			if !ok || tc[0] != w.Key {
				continue
			}
			in, ok := input(e.Source, e.Transformations)
			if !ok {
				continue
			}
			fl, _ := fields[tc[1]].(map[string]any)
			if fl == nil {
				fl = map[string]any{"inputFields": []map[string]any{}}
				fields[tc[1]] = fl
			}
			fl["inputFields"] = append(fl["inputFields"].([]map[string]any), in)
		}
		var dataset []map[string]any
		for _, e := range lin.RowDeps {
			if e.Target != w.Key {
				continue
			}
			if in, ok := input(e.Source, e.Transformations); ok {
				dataset = append(dataset, in)
			}
		}
		if len(fields) > 0 || len(dataset) > 0 {
			cl := map[string]any{"fields": fields}
			if len(dataset) > 0 {
				cl["dataset"] = dataset
			}
			facets["columnLineage"] = f("ColumnLineageDatasetFacet.json", cl)
		}
		var tagged []map[string]any
		for _, c := range w.Columns {
			for _, t := range tags[c.Key] {
				x := map[string]any{"key": t.Key, "value": t.Value, "field": c.Name}
				if t.Source != "" {
					x["source"] = t.Source
				}
				tagged = append(tagged, x)
			}
		}
		if len(tagged) > 0 {
			facets["tags"] = f("TagsDatasetFacet.json", map[string]any{"tags": tagged})
		}
		if w.Mode == "overwrite" {
			facets["lifecycleStateChange"] = f("LifecycleStateChangeDatasetFacet.json", map[string]any{"lifecycleStateChange": "OVERWRITE"})
		}
		ds := map[string]any{"namespace": w.Namespace, "name": w.Name}
		if len(facets) > 0 {
			ds["facets"] = facets
		}
		outputs = append(outputs, ds)
	}
	for _, c := range lin.Changes {
		state := map[string]string{plan.ChangeDrop: "DROP", plan.ChangeTruncate: "TRUNCATE", plan.ChangeRename: "RENAME"}[c.Action]
		if state == "" {
			continue // a load is a write, already among the outputs
		}
		d, lc := c.Dataset, map[string]any{"lifecycleStateChange": state}
		if c.Action == plan.ChangeRename {
			lc["previousIdentifier"] = map[string]any{"namespace": d.Namespace, "name": d.Name}
			d = *c.To
		}
		outputs = append(outputs, map[string]any{"namespace": d.Namespace, "name": d.Name,
			"facets": map[string]any{"lifecycleStateChange": f("LifecycleStateChangeDatasetFacet.json", lc)}})
	}

	event := map[string]any{
		"eventTime": t.UTC().Format(time.RFC3339Nano),
		"eventType": eventType,
		"producer":  ProducerURI,
		"schemaURL": CoreSchemaID + "#/$defs/RunEvent",
		"run":       map[string]any{"runId": RunID(env.EventID), "facets": runFacets},
		"job":       map[string]any{"namespace": env.App.Namespace, "name": JobName(env, lin), "facets": jobFacets},
		"inputs":    orEmpty(inputs),
		"outputs":   orEmpty(outputs),
	}
	return json.Marshal(event)
}

func orEmpty(l []map[string]any) []map[string]any {
	if l == nil {
		return []map[string]any{}
	}
	return l
}

// JobName is the name of the job of an emitted event: the app name, a dot, and the name of the
// first dataset the query wrote or changed (the query's action when it wrote nothing), so that
// each table a Spark application maintains is a job of its own, as openlineage-spark has it.
func JobName(env *events.Envelope, lin *plan.Lineage) string {
	target := env.Query.FuncName
	switch {
	case len(lin.Writes) > 0:
		target = lin.Writes[0].Name
	case len(lin.Changes) > 0:
		target = lin.Changes[0].Dataset.Name
	case env.Query.FuncName == "stream" && env.Query.Stream != nil:
		return streamJobName(env.App.Name, env.Query.Stream) // a foreachBatch stream writes no dataset
	}
	if target == "" {
		return env.App.Name
	}
	return env.App.Name + "." + strings.TrimPrefix(target, "/")
}

// streamJobName is the job of a streaming query that writes no dataset (a foreachBatch sink):
// "<app name>.<query name>", or the query id when it has no name.
func streamJobName(app string, st *events.Stream) string {
	return app + "." + cmp.Or(st.Name, st.ID)
}

// facetURLs maps the facet schema files colline emits to their _schemaURL at the embedded
// spec's versions ($id + "#/$defs/" + the definition named after the file).
var facetURLs = sync.OnceValues(func() (map[string]string, error) {
	out := map[string]string{}
	for _, file := range []string{"ParentRunFacet.json", "ProcessingEngineRunFacet.json", "ErrorMessageRunFacet.json", "JobTypeJobFacet.json",
		"SQLJobFacet.json", "SchemaDatasetFacet.json", "ColumnLineageDatasetFacet.json", "LifecycleStateChangeDatasetFacet.json", "TagsDatasetFacet.json"} {
		data, err := specFS.ReadFile("spec/facets/" + file)
		if err != nil {
			return nil, err
		}
		var doc struct {
			ID string `json:"$id"`
		}
		if err := json.Unmarshal(data, &doc); err != nil || doc.ID == "" {
			return nil, fmt.Errorf("openlineage: facet schema %s has no $id", file)
		}
		out[file] = doc.ID + "#/$defs/" + strings.TrimSuffix(path.Base(file), ".json")
	}
	return out, nil
})

// RowsFrom is colline's property of a transformation in a columnLineage facet's dataset list
// (the facet allows more properties): a row-level dependency that decides only the rows of some
// UNION branches lists the datasets those rows come from, as {namespace, name}; absent, it
// decides every row of the output, as OpenLineage has it. An entry with an empty namespace and
// the name "(inline data)" stands for a branch of inline rows (VALUES).
const RowsFrom = "rowsFrom"

// rowsFrom is the RowsFrom list of t (nil: every row).
func rowsFrom(t plan.Transformation, sets map[string]plan.Dataset) []map[string]any {
	var out []map[string]any
	for _, key := range t.RowSources() {
		if d, ok := sets[key]; ok {
			out = append(out, map[string]any{"namespace": d.Namespace, "name": d.Name})
			continue
		}
		out = append(out, map[string]any{"namespace": "", "name": key})
	}
	return out
}

// rootOf is the topmost run of a scheduler's parent run: its root, else itself (nil: none).
func rootOf(p *events.Parent) *events.Parent {
	for p != nil && p.Root != nil {
		p = p.Root
	}
	return p
}
