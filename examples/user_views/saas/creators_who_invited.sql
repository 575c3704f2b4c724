-- Virality tile: users who both created a project and invited a teammate.
SELECT user_id FROM events WHERE event_name = 'project_created'
INTERSECT
SELECT user_id FROM events WHERE event_name = 'invite_sent'
