-- INSERT ... VALUES reads inline data: a write with no edges
DROP DATABASE IF EXISTS literal_values CASCADE;
CREATE DATABASE literal_values;
USE literal_values;
CREATE TABLE dst (id bigint, name string) USING parquet;
INSERT INTO dst VALUES (1, 'a'), (2, 'b');
