-- an aggregate of a mart, a conditional count and a filter on customers with orders
select
    country_code,
    sum(total_amount) as revenue,
    count(*) as customers,
    sum(case when tier = 'gold' then 1 else 0 end) as gold_customers
from {{ ref('customer_orders') }}
where order_count > 0
group by country_code
