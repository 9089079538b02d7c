// colline 1: find a column's key by name
// :param name => 'revenue'
MATCH (d:Dataset)-[:HAS_COLUMN]->(c:Column)
WHERE c.name = $name
RETURN c.key AS column, d.kind AS kind, c.dataType AS dataType,
       CASE WHEN d.schema IS NOT NULL AND c.schema = d.schema AND (c.lastSeen IS NULL OR c.lastSeen < d.schemaSeen) THEN d.schemaSeen ELSE c.lastSeen END AS lastSeen
ORDER BY column
