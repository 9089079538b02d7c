-- an aggregate FILTER (WHERE ...) clause
DROP DATABASE IF EXISTS agg_filter_clause CASCADE;
CREATE DATABASE agg_filter_clause;
USE agg_filter_clause;
CREATE TABLE src (id bigint, name string, kind string, amount double, ts timestamp, tags array<string>, props map<string,string>, items array<struct<sku:string,qty:int>>, js string) USING parquet;
CREATE TABLE dst (kind string, big double) USING parquet;
INSERT INTO dst SELECT kind, sum(amount) FILTER (WHERE name IS NOT NULL) FROM src GROUP BY kind;
