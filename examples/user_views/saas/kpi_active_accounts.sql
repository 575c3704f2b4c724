-- Header KPI: accounts with an active subscription.
SELECT COUNT(DISTINCT account_id) AS active_accounts
FROM subscriptions
WHERE status = 'active'
