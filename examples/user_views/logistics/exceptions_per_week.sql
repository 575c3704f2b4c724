-- Quality chart: exception scans per warehouse and week.
SELECT date_trunc('WEEK', scanned_at) AS week, warehouse_id,
       COUNT(*) AS exceptions, COUNT(DISTINCT parcel_id) AS parcels
FROM scans
WHERE scan_type = 'exception'
GROUP BY date_trunc('WEEK', scanned_at), warehouse_id
