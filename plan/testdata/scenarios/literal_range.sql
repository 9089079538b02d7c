-- range() has no source dataset
DROP DATABASE IF EXISTS literal_range CASCADE;
CREATE DATABASE literal_range;
USE literal_range;
CREATE TABLE dst (id bigint, sq bigint) USING parquet;
INSERT INTO dst SELECT id, id * id FROM range(10);
