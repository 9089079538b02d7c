-- several columns in one expression all feed the target
DROP DATABASE IF EXISTS project_string_functions CASCADE;
CREATE DATABASE project_string_functions;
USE project_string_functions;
CREATE TABLE src (id bigint, name string, kind string, amount double, ts timestamp, tags array<string>, props map<string,string>, items array<struct<sku:string,qty:int>>, js string) USING parquet;
CREATE TABLE dst (line string) USING parquet;
INSERT INTO dst SELECT concat_ws('|', name, kind, CAST(amount AS string), date_format(ts, 'yyyy-MM-dd')) FROM src;
