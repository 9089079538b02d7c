-- MERGE INTO an Iceberg table in copy-on-write mode (ReplaceData over MergeRows): a conditional DELETE, an UPDATE SET col = expr, an INSERT (cols) VALUES
-- connectors: iceberg
DROP DATABASE IF EXISTS merge_copy_on_write CASCADE;
CREATE DATABASE merge_copy_on_write;
USE merge_copy_on_write;
CREATE TABLE src (id bigint, name string, kind string, amount double, ts timestamp, tags array<string>, props map<string,string>, items array<struct<sku:string,qty:int>>, js string) USING parquet;
CREATE NAMESPACE IF NOT EXISTS ice.merge_copy_on_write;
CREATE OR REPLACE TABLE ice.merge_copy_on_write.dst (id bigint, name string, amount double, note string) USING iceberg TBLPROPERTIES ('format-version' = '2', 'write.merge.mode' = 'copy-on-write');
MERGE INTO ice.merge_copy_on_write.dst t USING src s ON t.id = s.id
WHEN MATCHED AND s.kind = 'gone' THEN DELETE
WHEN MATCHED THEN UPDATE SET t.amount = t.amount + s.amount, t.note = upper(s.name)
WHEN NOT MATCHED THEN INSERT (id, name, amount, note) VALUES (s.id, s.name, s.amount, 'new');
