-- count(DISTINCT) is masked AGGREGATION
DROP DATABASE IF EXISTS agg_count_distinct CASCADE;
CREATE DATABASE agg_count_distinct;
USE agg_count_distinct;
CREATE TABLE src (id bigint, name string, kind string, amount double, ts timestamp, tags array<string>, props map<string,string>, items array<struct<sku:string,qty:int>>, js string) USING parquet;
CREATE TABLE dst (kind string, names bigint) USING parquet;
INSERT INTO dst SELECT kind, count(DISTINCT name) FROM src GROUP BY kind;
