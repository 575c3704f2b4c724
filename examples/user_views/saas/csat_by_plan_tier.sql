-- Support tile: average CSAT per plan tier of the ticket's account.
SELECT p.tier, AVG(t.csat) AS avg_csat, COUNT(t.csat) AS rated_tickets
FROM support_tickets t
JOIN subscriptions s ON s.account_id = t.account_id AND s.status = 'active'
JOIN plans p ON p.plan_id = s.plan_id
GROUP BY p.tier
