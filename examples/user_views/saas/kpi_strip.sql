-- KPI strip: accounts, users and open tickets in one table.
SELECT 'accounts' AS metric, COUNT(*) AS value FROM accounts
UNION
SELECT 'users', COUNT(*) FROM users
UNION
SELECT 'open_tickets', COUNT(*) FROM support_tickets WHERE closed_at IS NULL
