-- Engagement KPI: events per session.
SELECT COUNT(*) / COUNT(DISTINCT session_id) AS events_per_session
FROM events
WHERE session_id IS NOT NULL
