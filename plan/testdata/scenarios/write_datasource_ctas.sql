-- data source CTAS: one set of edges (the nested insert is skipped)
DROP DATABASE IF EXISTS write_datasource_ctas CASCADE;
CREATE DATABASE write_datasource_ctas;
USE write_datasource_ctas;
CREATE TABLE src (id bigint, name string, kind string, amount double, ts timestamp, tags array<string>, props map<string,string>, items array<struct<sku:string,qty:int>>, js string) USING parquet;
CREATE TABLE dst USING parquet AS SELECT kind, sum(amount) AS total FROM src GROUP BY kind;
