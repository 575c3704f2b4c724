-- Alarm sources as written in the details field, normalised.
SELECT CASE WHEN details IS NULL THEN '(none)' ELSE lower(trim(details)) END AS source,
       COUNT(*) AS alarms, MIN(raised_at) AS first_seen
FROM alarms
GROUP BY CASE WHEN details IS NULL THEN '(none)' ELSE lower(trim(details)) END
