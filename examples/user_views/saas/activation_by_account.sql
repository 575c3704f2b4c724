-- Account health: users per account and how many created a project.
SELECT u.account_id,
       COUNT(DISTINCT u.user_id) AS users,
       COUNT(DISTINCT CASE WHEN e.event_name = 'project_created' THEN u.user_id END) AS activated
FROM users u
LEFT JOIN events e ON e.user_id = u.user_id
GROUP BY u.account_id
