-- Pickup SLA: hours from shipment creation to the first scan of any of its parcels, per origin.
SELECT r.origin_warehouse_id,
       ROUND(AVG(timestampdiff(MINUTE, s.created_at, f.first_scan) / 60.0), 2) AS avg_pickup_hours,
       COUNT(*) AS shipments
FROM shipments s
JOIN (
    SELECT p.shipment_id, MIN(sc.scanned_at) AS first_scan
    FROM parcels p
    JOIN scans sc ON sc.parcel_id = p.parcel_id
    GROUP BY p.shipment_id
) f ON f.shipment_id = s.shipment_id
JOIN routes r ON r.route_id = s.route_id
GROUP BY r.origin_warehouse_id
