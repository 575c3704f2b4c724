-- Revenue movements: subscriptions that moved to a different plan than the account's previous one.
SELECT account_id, subscription_id, previous_plan, plan_id
FROM (
    SELECT account_id, subscription_id, plan_id,
           LAG(plan_id) OVER (PARTITION BY account_id ORDER BY started_on, subscription_id) AS previous_plan
    FROM subscriptions
) t
WHERE previous_plan IS NOT NULL AND previous_plan <> plan_id
