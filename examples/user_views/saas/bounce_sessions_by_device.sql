-- Engagement table: single-event (bounced) sessions per device.
SELECT s.device, COUNT(*) AS bounced_sessions
FROM sessions s
JOIN (SELECT session_id FROM events GROUP BY session_id HAVING COUNT(*) = 1) b
  ON b.session_id = s.session_id
GROUP BY s.device
