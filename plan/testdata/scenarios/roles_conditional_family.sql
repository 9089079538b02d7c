-- every conditional-family function keeps the same roles on Spark 3.5 and 4.x, where NULLIF and BETWEEN are rewritten through common expressions (With): NULLIF, NVL, NVL2, IFNULL, COALESCE, IF, CASE (searched and simple), <=> inside conditions, BETWEEN, try_* functions; in a SELECT list (a CTAS), in a WHERE and in an aggregate
DROP DATABASE IF EXISTS roles_conditional_family CASCADE;
CREATE DATABASE roles_conditional_family;
USE roles_conditional_family;
CREATE TABLE src (id bigint, a string, b string, c string, n double, m double, k int, arr array<string>) USING parquet;
CREATE TABLE values_of USING parquet AS SELECT id, NULLIF(a, b) AS f_nullif, NULLIF(NULLIF(a, b), c) AS f_nullif_nested, NVL(a, b) AS f_nvl, NVL2(a, b, c) AS f_nvl2, IFNULL(a, c) AS f_ifnull, COALESCE(a, b, c) AS f_coalesce, IF(n > m, a, b) AS f_if, CASE WHEN n > 0 THEN a WHEN m > 0 THEN b ELSE c END AS f_case, CASE k WHEN 1 THEN a ELSE b END AS f_case_simple, CASE WHEN a <=> b THEN c END AS f_nullsafe, IF(a <=> NULL, b, c) AS f_nullsafe_null, CASE WHEN n BETWEEN m AND 10 THEN a ELSE b END AS f_between, n BETWEEN 0 AND m AS f_between_value, NULLIF(n, m) * 2 AS f_nullif_expr, try_add(n, m) AS f_try_add, try_divide(n, m) AS f_try_divide, try_multiply(k, 2) AS f_try_multiply, try_cast(a AS bigint) AS f_try_cast, try_element_at(arr, k) AS f_try_element_at FROM src;
CREATE TABLE kept (id bigint, a string) USING parquet;
INSERT INTO kept SELECT id, a FROM src WHERE NULLIF(a, b) IS NOT NULL AND n BETWEEN 0 AND m AND NOT (c <=> b);
CREATE TABLE totals (a string, s double, avg_m double, first_nonnull string) USING parquet;
INSERT INTO totals SELECT a, try_sum(n), try_avg(m), max(NULLIF(b, c)) FROM src GROUP BY a;
