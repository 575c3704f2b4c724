-- Control tower: undelivered parcels whose last scan is over 3 days older than the network's latest scan.
SELECT p.parcel_id, p.shipment_id, last_scan.last_at, last_scan.scans
FROM parcels p
JOIN (
    SELECT parcel_id, MAX(scanned_at) AS last_at, COUNT(*) AS scans,
           MAX(CASE WHEN scan_type = 'delivered' THEN 1 ELSE 0 END) AS delivered
    FROM scans
    GROUP BY parcel_id
) last_scan ON last_scan.parcel_id = p.parcel_id
WHERE last_scan.delivered = 0
  AND last_scan.last_at < (SELECT MAX(scanned_at) FROM scans) - INTERVAL 3 DAYS
