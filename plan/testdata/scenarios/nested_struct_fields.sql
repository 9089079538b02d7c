-- struct fields read and written: GetStructField (address.city), GetArrayStructFields (items.sku), fields built with named_struct / struct, a field read back from a struct built in a subquery, and from_json(...).field; map values and array elements stay column-level
DROP DATABASE IF EXISTS nested_struct_fields CASCADE;
CREATE DATABASE nested_struct_fields;
USE nested_struct_fields;
CREATE TABLE src (id bigint, name string, address struct<street:string,city:string,geo:struct<lat:double,lon:double>>, items array<struct<sku:string,qty:int>>, props map<string,string>, js string) USING parquet;
CREATE TABLE flat (id bigint, city string, lat double, skus array<string>, first_qty int, color string, js_kind string) USING parquet;
INSERT INTO flat SELECT id, address.city, address.geo.lat, items.sku, items[0].qty, props['color'], from_json(js, 'kind STRING, n INT').kind FROM src;
CREATE TABLE built (id bigint, person struct<name:string,place:struct<city:string,lat:double>>, whole struct<street:string,city:string,geo:struct<lat:double,lon:double>>) USING parquet;
INSERT INTO built SELECT id, named_struct('name', upper(name), 'place', struct(address.city AS city, address.geo.lat AS lat)), address FROM src;
INSERT INTO flat SELECT id, p.place.city, p.place.lat, NULL, NULL, p.name, NULL FROM (SELECT id, named_struct('name', name, 'place', struct(address.city AS city, address.geo.lat AS lat)) AS p FROM src) x;
INSERT INTO flat SELECT id, person.place.city, whole.geo.lat, NULL, NULL, person.name, NULL FROM built;
