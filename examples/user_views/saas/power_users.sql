-- Power users: users active on at least three distinct days.
SELECT user_id, COUNT(DISTINCT event_date) AS active_days
FROM events
GROUP BY user_id
HAVING COUNT(DISTINCT event_date) >= 3
