-- Bar chart: MRR and subscriptions per plan.
SELECT p.name AS plan, p.tier,
       SUM(s.mrr) AS mrr,
       COUNT(*) AS subscriptions
FROM subscriptions s
JOIN plans p ON p.plan_id = s.plan_id
WHERE s.status = 'active'
GROUP BY p.name, p.tier
ORDER BY mrr DESC
