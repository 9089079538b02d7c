-- CACHE TABLE ... AS SELECT makes a temp view: collapsed like one
DROP DATABASE IF EXISTS cache_table_as_select CASCADE;
CREATE DATABASE cache_table_as_select;
USE cache_table_as_select;
CREATE TABLE src (id bigint, name string, kind string, amount double, ts timestamp, tags array<string>, props map<string,string>, items array<struct<sku:string,qty:int>>, js string) USING parquet;
CREATE TABLE dst (id bigint, name string) USING parquet;
CACHE TABLE cache_table_as_select_c AS SELECT id, name FROM src WHERE amount > 0;
INSERT INTO dst SELECT id, name FROM cache_table_as_select_c;
UNCACHE TABLE cache_table_as_select_c;
