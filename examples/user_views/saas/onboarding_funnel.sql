-- Funnel: users reaching each onboarding step.
SELECT COUNT(DISTINCT CASE WHEN event_name = 'signup' THEN user_id END) AS signed_up,
       COUNT(DISTINCT CASE WHEN event_name = 'project_created' THEN user_id END) AS created_project,
       COUNT(DISTINCT CASE WHEN event_name = 'invite_sent' THEN user_id END) AS invited_teammate
FROM events
