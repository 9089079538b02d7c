-- TestImpact: the skeleton's country_revenue job rewritten as a CTAS that renames revenue to total:
-- top_countries (and the report behind it) read revenue, which is gone.
DROP TABLE IF EXISTS shop.country_revenue;
CREATE TABLE shop.country_revenue USING parquet AS
SELECT c.country, sum(o.amount * 1.2) AS total, count(o.order_id) AS orders
FROM shop.orders o JOIN shop.customers c ON o.customer_id = c.customer_id
WHERE o.status = 'paid'
GROUP BY c.country;
