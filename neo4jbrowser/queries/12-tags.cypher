// colline 12: tags, and where they were set (tag files, dbt, OpenLineage, Spark comments)
MATCH (r:TagRule)
OPTIONAL MATCH (t:Tag {key: r.tag})
RETURN r.tag AS tag, r.source AS source, count(*) AS rules,
       collect(r.dataset + '#' + r.column)[..5] AS someColumns,
       coalesce(t.aggregation, 'pass') AS aggregation, coalesce(t.allowed, []) AS allowedIn
ORDER BY tag, source
