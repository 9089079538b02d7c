-- aggregates are DIRECT/AGGREGATION, count masks, group keys are GROUP_BY
DROP DATABASE IF EXISTS agg_sum_count CASCADE;
CREATE DATABASE agg_sum_count;
USE agg_sum_count;
CREATE TABLE src (id bigint, name string, kind string, amount double, ts timestamp, tags array<string>, props map<string,string>, items array<struct<sku:string,qty:int>>, js string) USING parquet;
CREATE TABLE dst (kind string, total double, n bigint, n_names bigint, avg_amount double) USING parquet;
INSERT INTO dst SELECT kind, sum(amount), count(*), count(name), avg(amount) FROM src GROUP BY kind;
