-- Table: users per role (missing role counts as member).
SELECT COALESCE(role, 'member') AS role, COUNT(*) AS users
FROM users
GROUP BY COALESCE(role, 'member')
