-- MERGE INTO an Iceberg table in merge-on-read mode (WriteDelta over MergeRows), with WHEN NOT MATCHED BY SOURCE
-- connectors: iceberg
DROP DATABASE IF EXISTS merge_merge_on_read CASCADE;
CREATE DATABASE merge_merge_on_read;
USE merge_merge_on_read;
CREATE TABLE src (id bigint, name string, kind string, amount double, ts timestamp, tags array<string>, props map<string,string>, items array<struct<sku:string,qty:int>>, js string) USING parquet;
CREATE NAMESPACE IF NOT EXISTS ice.merge_merge_on_read;
CREATE OR REPLACE TABLE ice.merge_merge_on_read.dst (id bigint, name string, amount double, note string) USING iceberg TBLPROPERTIES ('format-version' = '2', 'write.merge.mode' = 'merge-on-read');
MERGE INTO ice.merge_merge_on_read.dst t USING src s ON t.id = s.id
WHEN MATCHED AND s.kind = 'gone' THEN DELETE
WHEN MATCHED THEN UPDATE SET t.amount = t.amount + s.amount, t.note = upper(s.name)
WHEN NOT MATCHED THEN INSERT (id, name, amount, note) VALUES (s.id, s.name, s.amount, 'new')
WHEN NOT MATCHED BY SOURCE AND t.amount < 0 THEN UPDATE SET t.note = 'stale';
