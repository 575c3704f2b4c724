-- Cancellation reasons, normalised, with counts.
SELECT lower(regexp_replace(trim(coalesce(cancel_reason, 'unspecified')), '[ -]+', '_')) AS reason,
       COUNT(*) AS cancellations
FROM trips
WHERE status = 'cancelled'
GROUP BY 1
