-- Data quality tile: sessions with no tracked event.
SELECT s.session_id, s.user_id, s.session_date
FROM sessions s
WHERE NOT EXISTS (SELECT 1 FROM events e WHERE e.session_id = s.session_id)
