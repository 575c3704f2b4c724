-- Growth chart: users whose first event was on each day.
SELECT first_day, COUNT(*) AS new_users
FROM (SELECT user_id, MIN(event_date) AS first_day FROM events GROUP BY user_id) f
GROUP BY first_day
ORDER BY first_day
