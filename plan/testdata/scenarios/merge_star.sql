-- MERGE INTO with UPDATE SET * and INSERT *, from a subquery source (copy-on-write)
-- connectors: iceberg
DROP DATABASE IF EXISTS merge_star CASCADE;
CREATE DATABASE merge_star;
USE merge_star;
CREATE TABLE src (id bigint, name string, kind string, amount double, ts timestamp, tags array<string>, props map<string,string>, items array<struct<sku:string,qty:int>>, js string) USING parquet;
CREATE NAMESPACE IF NOT EXISTS ice.merge_star;
CREATE OR REPLACE TABLE ice.merge_star.dst (id bigint, name string, amount double) USING iceberg TBLPROPERTIES ('format-version' = '2');
MERGE INTO ice.merge_star.dst t USING (SELECT id, name, amount FROM src WHERE kind = 'buy') s ON t.id = s.id
WHEN MATCHED THEN UPDATE SET *
WHEN NOT MATCHED THEN INSERT *;
