-- Cohort grid: active users per signup week and weeks since signup.
SELECT date_trunc('week', u.signup_at) AS cohort_week,
       FLOOR(datediff(e.event_date, u.signup_date) / 7) AS week_number,
       COUNT(DISTINCT u.user_id) AS active_users
FROM users u
JOIN events e ON e.user_id = u.user_id
WHERE e.event_date >= u.signup_date
GROUP BY 1, 2
