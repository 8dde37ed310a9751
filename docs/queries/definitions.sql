-- Every definition the graph layer extracted, with the git blob it came from (join it with
-- `git ls-tree -r REV` to get paths at a revision).
WITH layers AS (
  SELECT file_name, decode(value) AS layer
  FROM parquet_kv_metadata('.lynx/objects/*/*.parquet')
  WHERE decode(key) = 'lynx.layer'
)
SELECT DISTINCT g.b AS definition, g.c AS kind, lower(hex(g.key))[1:40] AS blob
FROM read_parquet('.lynx/objects/*/*.parquet', union_by_name = true, filename = true) AS g
JOIN layers ON layers.file_name = g.filename
WHERE layers.layer = 'graph' AND g.fact = 0
ORDER BY definition, blob;
