-- collect_list / first / max_by
DROP DATABASE IF EXISTS agg_collect CASCADE;
CREATE DATABASE agg_collect;
USE agg_collect;
CREATE TABLE src (id bigint, name string, kind string, amount double, ts timestamp, tags array<string>, props map<string,string>, items array<struct<sku:string,qty:int>>, js string) USING parquet;
CREATE TABLE dst (kind string, names array<string>, first_name string, top_name string) USING parquet;
INSERT INTO dst SELECT kind, collect_list(name), first(name), max_by(name, amount) FROM src GROUP BY kind;
