-- Onboarding funnel: signed-up customers who never opened an account.
SELECT c.customer_id, c.full_name, c.kyc_status
FROM customers c
WHERE NOT EXISTS (SELECT 1 FROM accounts a WHERE a.customer_id = c.customer_id)
