-- an inline table joined to a real one
DROP DATABASE IF EXISTS literal_inline_table_join CASCADE;
CREATE DATABASE literal_inline_table_join;
USE literal_inline_table_join;
CREATE TABLE src (id bigint, name string, kind string, amount double, ts timestamp, tags array<string>, props map<string,string>, items array<struct<sku:string,qty:int>>, js string) USING parquet;
CREATE TABLE dst (id bigint, label string) USING parquet;
INSERT INTO dst SELECT s.id, m.label FROM src s JOIN VALUES ('buy', 'B'), ('sell', 'S') AS m(kind, label) ON s.kind = m.kind;
