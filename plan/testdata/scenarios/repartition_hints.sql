-- repartition hints, DISTRIBUTE BY and CLUSTER BY pass columns through
DROP DATABASE IF EXISTS repartition_hints CASCADE;
CREATE DATABASE repartition_hints;
USE repartition_hints;
CREATE TABLE src (id bigint, name string, kind string, amount double, ts timestamp, tags array<string>, props map<string,string>, items array<struct<sku:string,qty:int>>, js string) USING parquet;
CREATE TABLE dst (id bigint, kind string) USING parquet;
INSERT INTO dst SELECT /*+ REPARTITION(3, kind) */ id, kind FROM src;
INSERT INTO dst SELECT /*+ REBALANCE */ id, kind FROM src;
INSERT INTO dst SELECT id, kind FROM src DISTRIBUTE BY kind;
INSERT INTO dst SELECT id, kind FROM src CLUSTER BY id;
