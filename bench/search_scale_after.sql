-- Written by `CAIRN_UPDATE_BENCH_SQL=1 cargo test -p cairn-core --lib bench_copies`
-- from crates/core/src/store/search.rs, with bench/search_scale.sh's values
-- written in (project A, 21 rows, offset 0, the query as :q). Do not edit.
SELECT source, id, score, coalesce(NULL::timestamptz, now()) AS as_of FROM (
             (SELECT 'observation'::text AS source, o.id, o.created_at, CASE WHEN :q::text IS NULL THEN 0::float8 ELSE
             ts_rank_cd('{0.1, 0.2, 0.4, 1}'::float4[], o.search, websearch_to_tsquery('english', :q::text))::float8
             * (1 + 1 / (1 + greatest(0, extract(epoch FROM coalesce(NULL::timestamptz, now()) - o.created_at)::float8)
                             / 86400 / 14.0))
         END * (CASE o.state WHEN 'stale' THEN 0.5::float8 WHEN 'superseded' THEN 0.25::float8 ELSE 1::float8 END) AS score
              FROM ((SELECT c.* FROM (VALUES (0, 1), (1, 2), (2, 4), (4, 8)) r(lo, hi),
                 LATERAL (SELECT o.id, o.created_at, o.search, o.state FROM observations o
                          WHERE (o.visibility = 'team' OR o.member_id = NULL::uuid OR false::bool)
 AND o.project_id::text = '00000000-0000-4000-8000-000000000000'::text
 AND o.created_at <= coalesce(NULL::timestamptz, now())
 AND o.search @@ websearch_to_tsquery('english', :q::text)
 AND o.state NOT IN ('merged', 'archived')
                            AND o.search_day = ANY(ARRAY(
                                SELECT search_bucket('00000000-0000-4000-8000-000000000000'::uuid, coalesce(NULL::timestamptz, now()) - (k) * interval '1 day', 1)
                                FROM generate_series(r.lo, r.hi - 1) k))
                          ORDER BY o.created_at DESC) c)
          UNION ALL
          (SELECT c.* FROM (VALUES (0, 1), (1, 2), (2, 4), (4, 8), (8, 16)) r(lo, hi),
                 LATERAL (SELECT o.id, o.created_at, o.search, o.state FROM observations o
                          WHERE (o.visibility = 'team' OR o.member_id = NULL::uuid OR false::bool)
 AND o.project_id::text = '00000000-0000-4000-8000-000000000000'::text
 AND o.created_at <= coalesce(NULL::timestamptz, now())
 AND o.search @@ websearch_to_tsquery('english', :q::text)
 AND o.state NOT IN ('merged', 'archived')
 AND o.created_at < to_timestamp((floor(extract(epoch FROM coalesce(NULL::timestamptz, now())) / 86400) - 7) * 86400)
                            AND o.search_week = ANY(ARRAY(
                                SELECT search_bucket('00000000-0000-4000-8000-000000000000'::uuid, coalesce(NULL::timestamptz, now()) - (8 + 7 * k) * interval '1 day', 7)
                                FROM generate_series(r.lo, r.hi - 1) k))
                          ORDER BY o.created_at DESC) c)
          UNION ALL
          (SELECT o.id, o.created_at, o.search, o.state FROM observations o
           WHERE (o.visibility = 'team' OR o.member_id = NULL::uuid OR false::bool)
 AND o.project_id = '00000000-0000-4000-8000-000000000000'
 AND o.created_at <= coalesce(NULL::timestamptz, now())
 AND o.search @@ websearch_to_tsquery('english', :q::text)
 AND o.state NOT IN ('merged', 'archived')
             AND o.created_at < to_timestamp((floor((floor(extract(epoch FROM coalesce(NULL::timestamptz, now())) / 86400) - 8) / 7) - 15) * 7 * 86400)
           ORDER BY o.created_at DESC LIMIT 200)
          LIMIT 200) o
              ORDER BY score DESC, created_at DESC, id DESC LIMIT 21 + 0)
             UNION ALL
             (SELECT 'summary'::text AS source, su.id, su.created_at, CASE WHEN :q::text IS NULL THEN 0::float8 ELSE
             ts_rank_cd('{0.1, 0.2, 0.4, 1}'::float4[], su.search, websearch_to_tsquery('english', :q::text))::float8
             * (1 + 1 / (1 + greatest(0, extract(epoch FROM coalesce(NULL::timestamptz, now()) - su.created_at)::float8)
                             / 86400 / 14.0))
         END AS score
              FROM (WITH su_recent AS MATERIALIZED (
             SELECT su.id, su.created_at, su.search FROM summaries su
             WHERE (su.visibility = 'team' OR su.member_id = NULL::uuid OR false::bool)
 AND su.project_id = '00000000-0000-4000-8000-000000000000'
 AND su.created_at <= coalesce(NULL::timestamptz, now())
 AND su.search @@ websearch_to_tsquery('english', :q::text)
               AND su.created_at > coalesce(NULL::timestamptz, now()) - interval '14 days'
             ORDER BY su.created_at DESC LIMIT 200)
          SELECT * FROM su_recent WHERE (SELECT count(*) FROM su_recent) >= 200
          UNION ALL
          (SELECT su.id, su.created_at, su.search FROM summaries su
           WHERE (SELECT count(*) FROM su_recent) < 200
             AND (su.visibility = 'team' OR su.member_id = NULL::uuid OR false::bool)
 AND su.project_id = '00000000-0000-4000-8000-000000000000'
 AND su.created_at <= coalesce(NULL::timestamptz, now())
 AND su.search @@ websearch_to_tsquery('english', :q::text)
           ORDER BY su.created_at DESC LIMIT 200)) su
              ORDER BY score DESC, created_at DESC, id DESC LIMIT 21 + 0)
         ) hits
         ORDER BY score DESC, created_at DESC, id DESC
         LIMIT 21 OFFSET 0;
