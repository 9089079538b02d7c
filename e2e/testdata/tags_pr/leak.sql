-- A pull request's new job (e2e/tags_test.go): marketing targets with the customers' names, in the
-- clear, in mart_tags, where pii is not allowed (allowed: spark_catalog/lake.*). colline impact
-- must fail it (exit 5).
CREATE TABLE mart_tags.marketing_targets USING parquet AS
  SELECT customer_id, name, lower(country) AS country FROM lake.customers WHERE country = 'FR';
