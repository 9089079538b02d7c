-- MERGE INTO a Delta table with UPDATE SET * and INSERT *, from a subquery source with a filter
-- connectors: delta
DROP DATABASE IF EXISTS delta_merge_star CASCADE;
CREATE DATABASE delta_merge_star;
USE delta_merge_star;
CREATE TABLE src (id bigint, name string, kind string, amount double, ts timestamp, tags array<string>, props map<string,string>, items array<struct<sku:string,qty:int>>, js string) USING parquet;
CREATE TABLE dst (id bigint, name string, amount double) USING delta;
MERGE INTO dst t USING (SELECT id, name, amount FROM src WHERE kind = 'buy') s ON t.id = s.id
WHEN MATCHED THEN UPDATE SET *
WHEN NOT MATCHED THEN INSERT *;
