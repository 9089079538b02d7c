-- UNPIVOT: the value column reads every unpivoted column; the name column reads none
DROP DATABASE IF EXISTS expand_unpivot CASCADE;
CREATE DATABASE expand_unpivot;
USE expand_unpivot;
CREATE TABLE wide (id bigint, q1 double, q2 double) USING parquet;
CREATE TABLE dst (id bigint, quarter string, revenue double) USING parquet;
INSERT INTO dst SELECT id, quarter, revenue FROM wide UNPIVOT (revenue FOR quarter IN (q1, q2));
