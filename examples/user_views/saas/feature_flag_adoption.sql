-- Product tile: accounts with each feature flag on, and the adoption percentage.
SELECT flag_name,
       count_if(enabled) AS enabled_accounts,
       ROUND(100 * AVG(CASE WHEN enabled THEN 1 ELSE 0 END), 1) AS pct_enabled
FROM feature_flags
GROUP BY flag_name
