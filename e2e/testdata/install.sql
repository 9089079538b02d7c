-- docs/install.md: the job that make install-test runs with the listener from a Maven repository
CREATE TABLE install_src USING parquet AS SELECT 1 AS id, 'a' AS name;
INSERT INTO install_src SELECT id + 1, name FROM install_src;
