-- Tracking quality: gaps over 24 hours between consecutive scans of a parcel, per warehouse of the later scan.
SELECT warehouse_id, COUNT(*) AS long_gaps, MAX(gap_hours) AS longest_gap_hours
FROM (
    SELECT parcel_id, warehouse_id, scanned_at,
           (unix_timestamp(scanned_at)
            - unix_timestamp(LAG(scanned_at) OVER (PARTITION BY parcel_id ORDER BY scanned_at))) / 3600.0 AS gap_hours
    FROM scans
) g
WHERE gap_hours > 24
GROUP BY warehouse_id
