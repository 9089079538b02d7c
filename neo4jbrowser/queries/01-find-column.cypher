// colline 1: find a column's key by name
// :param name => 'revenue'
MATCH (d:Dataset)-[:HAS_COLUMN]->(c:Column)
WHERE c.name = $name
RETURN c.key AS column, d.kind AS kind, c.dataType AS dataType, c.lastSeen AS lastSeen
ORDER BY column
