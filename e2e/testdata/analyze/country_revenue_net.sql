-- TestImpact: the skeleton's country_revenue job without the 1.2 factor: revenue's values change,
-- and top_countries reads them (it alters, it does not break).
INSERT INTO shop.country_revenue
SELECT c.country, sum(o.amount), count(o.order_id)
FROM shop.orders o JOIN shop.customers c ON o.customer_id = c.customer_id
WHERE o.status = 'paid'
GROUP BY c.country;
