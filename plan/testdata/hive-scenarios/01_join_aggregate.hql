-- INSERT OVERWRITE with a join, a filter and aggregates.
INSERT OVERWRITE TABLE hshop.country_revenue
SELECT c.country, sum(o.amount * 1.2), count(o.order_id)
FROM hshop.orders o JOIN hshop.customers c ON o.customer_id = c.customer_id
WHERE o.status = 'paid'
GROUP BY c.country;
