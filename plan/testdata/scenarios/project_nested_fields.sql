-- struct fields, map values and array elements read their whole source column
DROP DATABASE IF EXISTS project_nested_fields CASCADE;
CREATE DATABASE project_nested_fields;
USE project_nested_fields;
CREATE TABLE src (id bigint, name string, kind string, amount double, ts timestamp, tags array<string>, props map<string,string>, items array<struct<sku:string,qty:int>>, js string) USING parquet;
CREATE TABLE dst (first_sku string, color string, first_tag string, nested struct<a:bigint,b:string>) USING parquet;
INSERT INTO dst SELECT items[0].sku, props['color'], tags[0], named_struct('a', id, 'b', name) FROM src;
