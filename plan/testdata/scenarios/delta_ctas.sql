-- Delta tables created and replaced from queries (CREATE TABLE … USING delta AS SELECT, CREATE OR REPLACE TABLE … AS SELECT, REPLACE TABLE), INSERT INTO and INSERT OVERWRITE, and a Delta table read by path
-- connectors: delta
DROP DATABASE IF EXISTS delta_ctas CASCADE;
CREATE DATABASE delta_ctas;
USE delta_ctas;
CREATE TABLE src (id bigint, name string, kind string, amount double, ts timestamp, tags array<string>, props map<string,string>, items array<struct<sku:string,qty:int>>, js string) USING parquet;
CREATE TABLE dst USING delta AS SELECT kind, sum(amount) AS total FROM src GROUP BY kind;
CREATE OR REPLACE TABLE dst USING delta AS SELECT kind, max(amount) AS total FROM src WHERE id > 0 GROUP BY kind;
REPLACE TABLE dst USING delta AS SELECT name AS kind, amount AS total FROM src;
INSERT INTO dst SELECT upper(kind), amount FROM src;
INSERT OVERWRITE dst SELECT kind, amount * 2 FROM src;
CREATE TABLE by_path USING delta LOCATION '/tmp/colline-capture/out/delta_ctas/by_path' AS SELECT id, name FROM src;
INSERT INTO dst SELECT name, id FROM delta.`/tmp/colline-capture/out/delta_ctas/by_path`;
