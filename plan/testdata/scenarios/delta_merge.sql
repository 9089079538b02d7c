-- MERGE INTO a Delta table (Delta's own MergeIntoCommand): a conditional DELETE, an UPDATE SET col = expr, an INSERT (cols) VALUES, and WHEN NOT MATCHED BY SOURCE
-- connectors: delta
DROP DATABASE IF EXISTS delta_merge CASCADE;
CREATE DATABASE delta_merge;
USE delta_merge;
CREATE TABLE src (id bigint, name string, kind string, amount double, ts timestamp, tags array<string>, props map<string,string>, items array<struct<sku:string,qty:int>>, js string) USING parquet;
CREATE TABLE dst (id bigint, name string, amount double, note string) USING delta;
MERGE INTO dst t USING src s ON t.id = s.id
WHEN MATCHED AND s.kind = 'gone' THEN DELETE
WHEN MATCHED THEN UPDATE SET t.amount = t.amount + s.amount, t.note = upper(s.name)
WHEN NOT MATCHED THEN INSERT (id, name, amount, note) VALUES (s.id, s.name, s.amount, 'new')
WHEN NOT MATCHED BY SOURCE AND t.amount < 0 THEN UPDATE SET t.note = 'stale';
