-- Monthly gross fares per city with month-over-month growth.
SELECT city_id, month, revenue,
       LAG(revenue) OVER (PARTITION BY city_id ORDER BY month) AS prev_revenue,
       ROUND((revenue - LAG(revenue) OVER (PARTITION BY city_id ORDER BY month)) * 100
             / LAG(revenue) OVER (PARTITION BY city_id ORDER BY month), 1) AS growth_pct
FROM (
    SELECT city_id, date_format(requested_at, 'yyyy-MM') AS month, SUM(fare) AS revenue
    FROM trips
    WHERE status = 'completed'
    GROUP BY city_id, date_format(requested_at, 'yyyy-MM')
) m
