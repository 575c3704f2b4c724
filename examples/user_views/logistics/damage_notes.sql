-- Claims: exception scans whose note mentions damage, per warehouse.
SELECT warehouse_id, COUNT(*) AS damage_scans, COUNT(DISTINCT parcel_id) AS parcels
FROM scans
WHERE scan_type = 'exception' AND lower(note) LIKE '%damag%'
GROUP BY warehouse_id
