-- Account table: the plan of each account's most recently started subscription.
SELECT account_id, max_by(plan_id, started_on) AS current_plan, COUNT(*) AS subscriptions
FROM subscriptions
GROUP BY account_id
