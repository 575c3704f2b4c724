-- Product list: accounts with the new_reports flag on whose users viewed a report.
SELECT a.account_id, a.name
FROM accounts a
WHERE EXISTS (SELECT 1 FROM feature_flags f
              WHERE f.account_id = a.account_id AND f.flag_name = 'new_reports' AND f.enabled)
  AND a.account_id IN (SELECT u.account_id FROM users u JOIN events e ON e.user_id = u.user_id
                       WHERE e.event_name = 'report_viewed')
