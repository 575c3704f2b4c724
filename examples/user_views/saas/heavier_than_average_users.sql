-- Table: users with more sessions than the average user.
SELECT user_id, COUNT(*) AS sessions
FROM sessions
GROUP BY user_id
HAVING COUNT(*) > (SELECT COUNT(*) / COUNT(DISTINCT user_id) FROM sessions)
