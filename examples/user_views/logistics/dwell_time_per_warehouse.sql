-- Hub throughput: average hours between a parcel's receipt and its loading out, per warehouse.
WITH stays AS (
    SELECT parcel_id, warehouse_id,
           MIN(CASE WHEN scan_type = 'received' THEN scanned_at END) AS received_at,
           MAX(CASE WHEN scan_type = 'loaded' THEN scanned_at END) AS loaded_at
    FROM scans
    GROUP BY parcel_id, warehouse_id
)
SELECT warehouse_id, COUNT(*) AS stays,
       ROUND(AVG((unix_timestamp(loaded_at) - unix_timestamp(received_at)) / 3600), 2) AS avg_dwell_hours
FROM stays
WHERE received_at IS NOT NULL AND loaded_at IS NOT NULL
GROUP BY warehouse_id
