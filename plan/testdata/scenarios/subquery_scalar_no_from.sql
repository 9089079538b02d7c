-- an outer column inside a scalar subquery without FROM is the value of the column (DIRECT/TRANSFORMATION), not a correlation key
DROP DATABASE IF EXISTS subquery_scalar_no_from CASCADE;
CREATE DATABASE subquery_scalar_no_from;
USE subquery_scalar_no_from;
CREATE TABLE t (a bigint, b bigint, c bigint) USING parquet;
CREATE TABLE dst (s bigint, c bigint) USING parquet;
INSERT INTO dst SELECT (SELECT a + b) AS s, c FROM t;
