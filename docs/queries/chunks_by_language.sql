-- Chunks per language and kind, over every chunks segment of an object directory.
-- Run from the repository root: duckdb -c ".read docs/queries/chunks_by_language.sql"
WITH layers AS (
  SELECT file_name, decode(value) AS layer
  FROM parquet_kv_metadata('.lynx/objects/*/*.parquet')
  WHERE decode(key) = 'lynx.layer'
)
SELECT c.lang, c.kind, count(*) AS chunks
FROM read_parquet('.lynx/objects/*/*.parquet', union_by_name = true, filename = true) AS c
JOIN layers ON layers.file_name = c.filename
WHERE layers.layer = 'chunks' AND c.ord >= 0
GROUP BY ALL
ORDER BY chunks DESC, c.lang, c.kind;
