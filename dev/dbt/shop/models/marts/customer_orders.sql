-- a join, aggregates and a CASE over an aggregate
select
    c.customer_id,
    c.customer_name,
    c.country_code,
    count(o.order_id) as order_count,
    sum(o.amount) as total_amount,
    case
        when sum(o.amount) >= 250 then 'gold'
        when sum(o.amount) >= 50 then 'silver'
        else 'bronze'
    end as tier
from {{ ref('stg_customers') }} c
left join {{ ref('stg_orders') }} o on o.customer_id = c.customer_id
group by c.customer_id, c.customer_name, c.country_code
