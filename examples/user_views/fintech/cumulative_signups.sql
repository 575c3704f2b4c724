-- Growth chart: new customers per week and the running total.
SELECT week, new_customers, SUM(new_customers) OVER (ORDER BY week) AS total_customers
FROM (
    SELECT date_trunc('WEEK', created_at) AS week, COUNT(*) AS new_customers
    FROM customers
    GROUP BY date_trunc('WEEK', created_at)
) w
