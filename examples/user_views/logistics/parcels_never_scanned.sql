-- Exceptions: parcels of shipped shipments without any scan.
SELECT p.parcel_id, p.barcode, s.shipment_id, s.ship_date
FROM parcels p
JOIN shipments s ON s.shipment_id = p.shipment_id
LEFT ANTI JOIN scans sc ON sc.parcel_id = p.parcel_id
WHERE s.ship_date IS NOT NULL
