-- bench/search_scale_seed.sql: the corpus of bench/search_scale.sh, in SQL only.
-- psql variables: obs_total (1000000), obs_a (100000).
-- 50 projects of one team; row g (1..obs_total) belongs to project A when
-- g % (obs_total / obs_a) = 0, else round-robin to the 49 others; rows are in
-- time order over 180 days up to now, so the projects interleave on disk.
-- Text: a vocabulary of 3,000 made-up words (`w1` … `w3000`, `w1` the most
-- common), a word of rank r picked with probability ∝ 1/r. To keep seeding
-- to a few minutes, rows are put together from pools of pre-made word runs
-- (10,000 each for title, subtitle, facts; 20,000 narratives), picked by
-- hash of the row number: title 4–10 words, subtitle 5–12, 2–4 facts of
-- 6–12, narrative 30–80, as memory_latency generates them. The migrations'
-- trigger fills every `search` vector. No sessions, no summaries.
\set ON_ERROR_STOP 1
SELECT setseed(0.4242);
CREATE SCHEMA seed;
CREATE FUNCTION seed.words(n int) RETURNS text LANGUAGE sql VOLATILE AS $$
    SELECT string_agg('w' || least(3000, floor(exp(random() * ln(3001)))::int), ' ')
    FROM generate_series(1, n) $$;
CREATE TABLE seed.pool (kind text, i int, txt text, PRIMARY KEY (kind, i));
INSERT INTO seed.pool SELECT 'title', i, seed.words(4 + (random() * 6)::int) FROM generate_series(0, 9999) i;
INSERT INTO seed.pool SELECT 'subtitle', i, seed.words(5 + (random() * 7)::int) FROM generate_series(0, 9999) i;
INSERT INTO seed.pool SELECT 'fact', i, seed.words(6 + (random() * 6)::int) FROM generate_series(0, 9999) i;
INSERT INTO seed.pool SELECT 'narrative', i, seed.words(30 + (random() * 50)::int) FROM generate_series(0, 19999) i;
INSERT INTO teams (id, slug, name) VALUES ('00000000-0000-4000-8000-000000000001', 'bench', 'bench');
INSERT INTO projects (id, team_id, slug, name)
SELECT ('00000000-0000-4000-8000-' || lpad(n::text, 12, '0'))::uuid, '00000000-0000-4000-8000-000000000001',
       'p' || n, 'project ' || n
FROM generate_series(0, 49) n;  -- project 0 is A: 00000000-0000-4000-8000-000000000000

CREATE FUNCTION seed.pick(k text, n int) RETURNS text LANGUAGE sql STABLE AS $$
    SELECT txt FROM seed.pool WHERE kind = k AND i = n $$;
CREATE FUNCTION seed.batch(lo bigint, hi bigint, total bigint, per_a bigint) RETURNS void LANGUAGE sql AS $$
INSERT INTO observations (id, team_id, project_id, generation_key, kind, title, subtitle, facts, narrative,
                          concepts, provider, created_at, updated_at)
SELECT md5('o' || g)::uuid, '00000000-0000-4000-8000-000000000001',
       ('00000000-0000-4000-8000-' || lpad(pn::text, 12, '0'))::uuid,
       'bench:' || g, (ARRAY['discovery', 'change', 'bugfix', 'feature', 'refactor', 'decision'])[1 + h % 6],
       seed.pick('title', (h / 7 % 10000)::int), seed.pick('subtitle', (h / 70001 % 10000)::int),
       ARRAY(SELECT seed.pick('fact', ((h / 13 + f * 7919) % 10000)::int) FROM generate_series(1, 2 + (h / 3 % 3)::int) f),
       seed.pick('narrative', (h / 11 % 20000)::int), ARRAY['how-it-works'], 'heuristic', t, t
FROM generate_series(lo, hi) g,
LATERAL (SELECT hashint8extended(g, 7) & 9223372036854775807 AS h,
                CASE WHEN g % per_a = 0 THEN 0 ELSE 1 + (g % 49)::int END AS pn,
                now() - interval '180 days' + g * (interval '180 days' / total) AS t) x
$$;
