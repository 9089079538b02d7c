-- Spark reads a table Hive wrote (hshop.country_revenue, plan/testdata/hive-scenarios/01) from
-- Hive's metastore and writes another: the column path crosses the two engines (e2e/hive_test.go).
CREATE TABLE hshop.country_report (country STRING, revenue DOUBLE) USING parquet;
INSERT INTO hshop.country_report SELECT upper(country), revenue FROM hshop.country_revenue WHERE orders > 0;
