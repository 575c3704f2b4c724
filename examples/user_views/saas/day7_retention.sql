-- Retention tile: users active exactly 7 days after signup, per signup date.
SELECT u.signup_date,
       COUNT(DISTINCT u.user_id) AS retained_day7
FROM users u
JOIN events e ON e.user_id = u.user_id
WHERE e.event_date = date_add(u.signup_date, 7)
GROUP BY u.signup_date
