-- Cohort grid: buyers per signup month and months since signup.
SELECT date_trunc('MONTH', c.signup_date) AS cohort_month,
       CAST(months_between(date_trunc('MONTH', o.order_date), date_trunc('MONTH', c.signup_date)) AS INT) AS month_number,
       COUNT(DISTINCT c.customer_id) AS active_customers
FROM customers c
JOIN orders o ON o.customer_id = c.customer_id
GROUP BY 1, 2
