-- Leaderboard: top ten accounts by MRR, labelled "name (domain)".
SELECT a.account_id, concat(a.name, ' (', a.domain, ')') AS label, SUM(s.mrr) AS mrr
FROM accounts a
JOIN subscriptions s ON s.account_id = a.account_id
WHERE s.status = 'active'
GROUP BY a.account_id, a.name, a.domain
ORDER BY mrr DESC, a.account_id
LIMIT 10
