SELECT source, id, score, now() AS as_of FROM (
    (SELECT 'observation'::text AS source, o.id, o.created_at,
            ts_rank_cd('{0.1, 0.2, 0.4, 1}'::float4[], o.search, websearch_to_tsquery('english', :q::text))::float8
            * (1 + 1 / (1 + greatest(0, extract(epoch FROM now() - o.created_at)::float8) / 86400 / 14.0)) AS score
     FROM ((SELECT c.* FROM (VALUES (0, 1), (1, 2), (2, 4), (4, 8)) r(lo, hi),
              LATERAL (SELECT o.id, o.created_at, o.search FROM observations o
                       WHERE o.project_id::text = '00000000-0000-4000-8000-000000000000' AND o.created_at <= now()
                         AND o.search @@ websearch_to_tsquery('english', :q::text)
                         AND o.search_day = ANY(ARRAY(
                             SELECT search_bucket('00000000-0000-4000-8000-000000000000', now() - d * interval '1 day', 1)
                             FROM generate_series(r.lo, r.hi - 1) d))
                       ORDER BY o.created_at DESC) c)
           UNION ALL
           (SELECT c.* FROM (VALUES (0, 1), (1, 2), (2, 4), (4, 8), (8, 16)) r(lo, hi),
              LATERAL (SELECT o.id, o.created_at, o.search FROM observations o
                       WHERE o.project_id::text = '00000000-0000-4000-8000-000000000000'
                         AND o.created_at < to_timestamp((floor(extract(epoch FROM now()) / 86400) - 7) * 86400)
                         AND o.search @@ websearch_to_tsquery('english', :q::text)
                         AND o.search_week = ANY(ARRAY(
                             SELECT search_bucket('00000000-0000-4000-8000-000000000000', now() - (8 + 7 * w) * interval '1 day', 7)
                             FROM generate_series(r.lo, r.hi - 1) w))
                       ORDER BY o.created_at DESC) c)
           UNION ALL
           (SELECT o.id, o.created_at, o.search FROM observations o
            WHERE o.project_id = '00000000-0000-4000-8000-000000000000' AND o.created_at <= now()
              AND o.search @@ websearch_to_tsquery('english', :q::text)
              AND o.created_at < to_timestamp((floor((floor(extract(epoch FROM now()) / 86400) - 8) / 7) - 15) * 7 * 86400)
            ORDER BY o.created_at DESC LIMIT 200)
           LIMIT 200) o
     ORDER BY score DESC, created_at DESC, id DESC LIMIT 21)
    UNION ALL
    (SELECT 'summary'::text AS source, su.id, su.created_at,
            ts_rank_cd('{0.1, 0.2, 0.4, 1}'::float4[], su.search, websearch_to_tsquery('english', :q::text))::float8
            * (1 + 1 / (1 + greatest(0, extract(epoch FROM now() - su.created_at)::float8) / 86400 / 14.0)) AS score
     FROM (SELECT su.id, su.created_at, su.search FROM summaries su
           WHERE su.project_id = '00000000-0000-4000-8000-000000000000' AND su.created_at <= now()
             AND su.search @@ websearch_to_tsquery('english', :q::text)
           ORDER BY su.created_at DESC LIMIT 200) su
     ORDER BY score DESC, created_at DESC, id DESC LIMIT 21)
) hits
ORDER BY score DESC, created_at DESC, id DESC
LIMIT 21;
