-- TestImpact: the skeleton's country_revenue job counting distinct orders: only the orders column
-- changes, and nothing downstream reads it.
INSERT INTO shop.country_revenue
SELECT c.country, sum(o.amount * 1.2), count(DISTINCT o.order_id)
FROM shop.orders o JOIN shop.customers c ON o.customer_id = c.customer_id
WHERE o.status = 'paid'
GROUP BY c.country;
