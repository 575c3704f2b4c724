-- Collections list: unpaid invoices past their due date as of the reporting date.
SELECT i.invoice_id, a.name, i.amount + i.tax AS total_due, i.due_on
FROM invoices i
JOIN accounts a ON a.account_id = i.account_id
WHERE i.status <> 'paid' AND i.due_on < DATE '2024-05-01'
