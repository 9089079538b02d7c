-- stack: each generated column reads the arguments in its position, approximated as all arguments
DROP DATABASE IF EXISTS generate_stack CASCADE;
CREATE DATABASE generate_stack;
USE generate_stack;
CREATE TABLE src (id bigint, name string, kind string, amount double, ts timestamp, tags array<string>, props map<string,string>, items array<struct<sku:string,qty:int>>, js string) USING parquet;
CREATE TABLE dst (label string, value string) USING parquet;
INSERT INTO dst SELECT stack(2, 'name', name, 'kind', kind) AS (label, value) FROM src;
