-- Growth chart: cumulative user signups by day.
SELECT signup_date,
       SUM(COUNT(*)) OVER (ORDER BY signup_date) AS total_users
FROM users
GROUP BY signup_date
