-- Heatmap of requests by weekday name and UTC hour.
SELECT date_format(requested_at, 'EEE') AS weekday, hour(requested_at) AS hr, COUNT(*) AS requests
FROM trips
GROUP BY date_format(requested_at, 'EEE'), hour(requested_at)
