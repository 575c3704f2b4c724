-- Engagement KPI: average number of sessions per user who has sessions.
SELECT AVG(n) AS avg_sessions_per_user, MAX(n) AS max_sessions
FROM (SELECT user_id, COUNT(*) AS n FROM sessions GROUP BY user_id) t
