//! Search, timeline and fetch by ids: what is found and in which order, the
//! filters, summaries as hits, stable pages, tenant bounds and bad input.

use chrono::{DateTime, Duration, Utc};
use serde_json::{Value, json};
use uuid::Uuid;

use crate::helpers::{TestApp, found, hit_ids, search, spawn_app};

/// An observation as the generator would write it, `hours_ago` before `base()`.
#[derive(Clone, Default)]
struct Obs {
    kind: &'static str,
    title: &'static str,
    subtitle: &'static str,
    facts: Vec<&'static str>,
    narrative: &'static str,
    concepts: Vec<&'static str>,
    files_read: Vec<&'static str>,
    files_modified: Vec<&'static str>,
    session: Option<Uuid>,
    hours_ago: i64,
}

/// A fixed clock for one test, a little in the past, so equal ages are equal times.
fn base() -> DateTime<Utc> {
    Utc::now() - Duration::minutes(1)
}

async fn insert_in(app: &TestApp, team_id: Uuid, project_id: Uuid, at: DateTime<Utc>, o: Obs) -> Uuid {
    let id = Uuid::now_v7();
    let kind = if o.kind.is_empty() { "discovery" } else { o.kind };
    let at = at - Duration::hours(o.hours_ago);
    sqlx::query(
        "INSERT INTO observations (id, team_id, project_id, session_id, generation_key, kind, title, subtitle,
             facts, narrative, concepts, files_read, files_modified, provider, model, created_at, updated_at)
         VALUES ($1, $2, $3, $4, 'test:' || $1, $5, $6, $7, $8, $9, $10, $11, $12, 'heuristic', 'none', $13, $13)",
    )
    .bind(id)
    .bind(team_id)
    .bind(project_id)
    .bind(o.session)
    .bind(kind)
    .bind(o.title)
    .bind(o.subtitle)
    .bind(&o.facts)
    .bind(o.narrative)
    .bind(&o.concepts)
    .bind(&o.files_read)
    .bind(&o.files_modified)
    .bind(at)
    .execute(&app.pool)
    .await
    .unwrap();
    id
}

async fn insert(app: &TestApp, at: DateTime<Utc>, o: Obs) -> Uuid {
    insert_in(app, app.team_id, app.project_id, at, o).await
}

async fn session(app: &TestApp, agent: &str, platform_source: Option<&str>) -> Uuid {
    let id = Uuid::now_v7();
    sqlx::query(
        "INSERT INTO sessions (id, team_id, project_id, agent, external_session_id, platform_source)
         VALUES ($1, $2, $3, $4, $5, $6)",
    )
    .bind(id)
    .bind(app.team_id)
    .bind(app.project_id)
    .bind(agent)
    .bind(format!("ext-{id}"))
    .bind(platform_source)
    .execute(&app.pool)
    .await
    .unwrap();
    id
}

async fn summary(app: &TestApp, session_id: Uuid, request: &str, learned: &str, at: DateTime<Utc>) -> Uuid {
    let id = Uuid::now_v7();
    sqlx::query(
        "INSERT INTO summaries (id, team_id, project_id, session_id, generation_key, scope, prompt_number,
             request, learned, completed, created_at)
         VALUES ($1, $2, $3, $4, 'test:' || $1, 'turn', 1, $5, $6, 'done', $7)",
    )
    .bind(id)
    .bind(app.team_id)
    .bind(app.project_id)
    .bind(session_id)
    .bind(request)
    .bind(learned)
    .bind(at)
    .execute(&app.pool)
    .await
    .unwrap();
    id
}

/// The hits' scores, in order.
fn scores(body: &Value) -> Vec<f64> {
    body["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["score"].as_f64().unwrap())
        .collect()
}

fn ids_of(list: &Value) -> Vec<Uuid> {
    list.as_array()
        .unwrap()
        .iter()
        .map(|o| o["id"].as_str().unwrap().parse().unwrap())
        .collect()
}

fn sorted(mut ids: Vec<Uuid>) -> Vec<Uuid> {
    ids.sort();
    ids
}

#[tokio::test]
async fn words_are_found_in_the_title_the_facts_and_the_narrative() {
    let app = spawn_app().await;
    let at = base();
    let in_title = insert(
        &app,
        at,
        Obs {
            title: "Tokenizer rejects tabs",
            ..Obs::default()
        },
    )
    .await;
    let in_facts = insert(
        &app,
        at,
        Obs {
            title: "Config",
            facts: vec!["The lexer caches keywords"],
            ..Obs::default()
        },
    )
    .await;
    let in_subtitle = insert(
        &app,
        at,
        Obs {
            title: "Build",
            subtitle: "Linker flags moved",
            ..Obs::default()
        },
    )
    .await;
    let in_narrative = insert(
        &app,
        at,
        Obs {
            title: "Cleanup",
            narrative: "Removed the obsolete scheduler shim.",
            ..Obs::default()
        },
    )
    .await;

    assert_eq!(found(&app, "query=tokenizer").await, [in_title]);
    assert_eq!(found(&app, "query=lexer").await, [in_facts]);
    assert_eq!(found(&app, "query=linker").await, [in_subtitle]);
    // Stemmed: "schedulers" finds "scheduler".
    assert_eq!(found(&app, "query=schedulers").await, [in_narrative]);
    // Any word may match (`or` changes nothing); quoted phrases work as in web search.
    assert_eq!(
        sorted(found(&app, "query=scheduler%20tabs").await),
        sorted(vec![in_title, in_narrative])
    );
    assert_eq!(
        sorted(found(&app, "query=scheduler%20or%20tabs").await),
        sorted(vec![in_title, in_narrative])
    );
    assert_eq!(
        found(&app, "query=%22obsolete%20scheduler%22").await,
        [in_narrative]
    );
    assert_eq!(
        found(&app, "query=%22scheduler%20obsolete%22").await,
        Vec::<Uuid>::new()
    );
    assert_eq!(found(&app, "query=nothingmatchesthis").await, Vec::<Uuid>::new());

    let body = search(&app, "query=tokenizer").await;
    let hit = &body["results"][0];
    assert_eq!(hit["type"], "observation");
    assert!(hit["score"].as_f64().unwrap() > 0.0, "{hit}");
    assert!(hit.get("summary").is_none(), "{hit}");
    assert_eq!(hit["observation"]["metadata"]["title"], "Tokenizer rejects tabs");
    assert_eq!(body["nextCursor"], Value::Null);
}

#[tokio::test]
async fn a_title_match_ranks_above_facts_above_narrative_and_newer_above_older() {
    let app = spawn_app().await;
    let at = base();
    // Inserted worst first, so insertion order cannot explain the result.
    let narrative = insert(
        &app,
        at,
        Obs {
            title: "Cleanup",
            narrative: "The migrator now skips empty files.",
            ..Obs::default()
        },
    )
    .await;
    let facts = insert(
        &app,
        at,
        Obs {
            title: "Data",
            facts: vec!["migrator runs in one transaction"],
            ..Obs::default()
        },
    )
    .await;
    let title = insert(
        &app,
        at,
        Obs {
            title: "Migrator rewrite",
            ..Obs::default()
        },
    )
    .await;
    let body = search(&app, "query=migrator").await;
    assert_eq!(hit_ids(&body), [title, facts, narrative]);
    let scores = scores(&body);
    assert!(scores[0] > scores[1] && scores[1] > scores[2], "{scores:?}");

    // A year-old title match still beats a brand-new narrative match…
    let old_title = insert(
        &app,
        at,
        Obs {
            title: "Compactor design",
            hours_ago: 24 * 365,
            ..Obs::default()
        },
    )
    .await;
    let new_narrative = insert(
        &app,
        at,
        Obs {
            title: "Notes",
            narrative: "compactor tuned",
            ..Obs::default()
        },
    )
    .await;
    assert_eq!(found(&app, "query=compactor").await, [old_title, new_narrative]);
    // …but recency is blended in, not only a tie-break: a new title match
    // (1.0 × 2) outranks a year-old title-and-facts match (1.4 × ~1.04).
    let old_rich = insert(
        &app,
        at,
        Obs {
            title: "Throttle limits",
            facts: vec!["throttle applies per token"],
            hours_ago: 24 * 365,
            ..Obs::default()
        },
    )
    .await;
    let new_plain = insert(
        &app,
        at,
        Obs {
            title: "Throttle",
            ..Obs::default()
        },
    )
    .await;
    assert_eq!(found(&app, "query=throttle").await, [new_plain, old_rich]);
    let (status, body) = app
        .get(
            "/v1/search?query=throttle&orderBy=oldest",
            Some(&app.ingest_token),
        )
        .await;
    assert_eq!((status, hit_ids(&body)), (200, vec![old_rich, new_plain]));
    // …and among equal text matches the newer comes first; `oldest` and `newest` override relevance.
    let week = insert(
        &app,
        at,
        Obs {
            title: "Sharding",
            hours_ago: 24 * 7,
            ..Obs::default()
        },
    )
    .await;
    let month = insert(
        &app,
        at,
        Obs {
            title: "Sharding",
            hours_ago: 24 * 30,
            ..Obs::default()
        },
    )
    .await;
    let day = insert(
        &app,
        at,
        Obs {
            title: "Sharding",
            hours_ago: 24,
            ..Obs::default()
        },
    )
    .await;
    assert_eq!(found(&app, "query=sharding").await, [day, week, month]);
    assert_eq!(
        found(&app, "query=sharding&orderBy=oldest").await,
        [month, week, day]
    );
    assert_eq!(
        found(&app, "query=sharding&orderBy=newest").await,
        [day, week, month]
    );

    // Without a query: newest first, by the filters alone.
    let all = found(&app, "summaries=false&limit=100").await;
    assert_eq!(all.len(), 10);
    // Equal times: the greater id first (ids are UUIDv7, so the later insert).
    assert_eq!(&all[all.len() - 3..], [month, old_rich, old_title]);
    assert_eq!(
        found(&app, "orderBy=oldest&limit=3").await,
        [old_title, old_rich, month]
    );
}

#[tokio::test]
async fn each_filter_narrows_alone_and_in_combination() {
    let app = spawn_app().await;
    let at = base();
    let claude = session(&app, "claude-code", Some("claude")).await;
    let cursor = session(&app, "cursor", Some("cursor-ide")).await;
    let bug_parser = insert(
        &app,
        at,
        Obs {
            kind: "bugfix",
            title: "Cache parser panic",
            concepts: vec!["gotcha", "problem-solution"],
            files_modified: vec!["src/parser.rs"],
            session: Some(claude),
            hours_ago: 48,
            ..Obs::default()
        },
    )
    .await;
    let feature_parser = insert(
        &app,
        at,
        Obs {
            kind: "feature",
            title: "Cache parser hints",
            concepts: vec!["pattern"],
            files_read: vec!["/home/dev/app/src/parser.rs"],
            session: Some(cursor),
            hours_ago: 24,
            ..Obs::default()
        },
    )
    .await;
    let bug_lexer = insert(
        &app,
        at,
        Obs {
            kind: "bugfix",
            title: "Cache lexer fix",
            concepts: vec!["gotcha"],
            files_modified: vec!["src/lexer.rs", "tests/my_parser.rs"],
            session: Some(cursor),
            hours_ago: 1,
            ..Obs::default()
        },
    )
    .await;
    let manual = insert(
        &app,
        at,
        Obs {
            kind: "note",
            title: "Cache notes",
            ..Obs::default()
        },
    )
    .await;
    let q = "query=cache&summaries=false";
    assert_eq!(found(&app, q).await.len(), 4);

    // Type, one or several.
    assert_eq!(
        sorted(found(&app, &format!("{q}&type=bugfix")).await),
        sorted(vec![bug_parser, bug_lexer])
    );
    assert_eq!(
        sorted(found(&app, &format!("{q}&type=feature,%20note")).await),
        sorted(vec![feature_parser, manual])
    );
    // Concept (any of those given).
    assert_eq!(
        sorted(found(&app, &format!("{q}&concept=gotcha")).await),
        sorted(vec![bug_parser, bug_lexer])
    );
    assert_eq!(
        sorted(found(&app, &format!("{q}&concept=pattern,problem-solution")).await),
        sorted(vec![bug_parser, feature_parser])
    );
    // File: the exact path, read or modified…
    assert_eq!(
        sorted(found(&app, &format!("{q}&file=src/parser.rs")).await),
        sorted(vec![feature_parser, bug_parser])
    );
    assert_eq!(found(&app, &format!("{q}&file=src/lexer.rs")).await, [bug_lexer]);
    // …or a path ending in `/<file>`: `parser.rs` is not `my_parser.rs`.
    assert_eq!(
        sorted(found(&app, &format!("{q}&file=parser.rs")).await),
        sorted(vec![feature_parser, bug_parser])
    );
    assert_eq!(found(&app, &format!("{q}&file=rs")).await, Vec::<Uuid>::new());
    assert_eq!(
        found(&app, &format!("{q}&file=%25.rs")).await,
        Vec::<Uuid>::new(),
        "LIKE characters are literal"
    );
    // Session, agent.
    assert_eq!(
        found(&app, &format!("{q}&sessionId={claude}")).await,
        [bug_parser]
    );
    assert_eq!(
        sorted(found(&app, &format!("{q}&agent=cursor")).await),
        sorted(vec![bug_lexer, feature_parser])
    );
    assert_eq!(
        found(&app, &format!("{q}&agent=windsurf")).await,
        Vec::<Uuid>::new()
    );
    // Date range: RFC 3339 and epoch milliseconds.
    let since = (at - Duration::hours(30)).to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
    let until = (at - Duration::hours(2)).timestamp_millis();
    assert_eq!(
        sorted(found(&app, &format!("{q}&dateStart={since}")).await),
        sorted(vec![manual, bug_lexer, feature_parser])
    );
    assert_eq!(
        sorted(found(&app, &format!("{q}&dateEnd={until}")).await),
        sorted(vec![feature_parser, bug_parser])
    );
    assert_eq!(
        found(&app, &format!("{q}&dateStart={since}&dateEnd={until}")).await,
        [feature_parser]
    );
    // Two filters at once are ANDed.
    assert_eq!(
        found(&app, &format!("{q}&type=bugfix&file=parser.rs")).await,
        [bug_parser]
    );
    assert_eq!(
        found(&app, &format!("{q}&type=bugfix&agent=cursor")).await,
        [bug_lexer]
    );
    assert_eq!(
        found(&app, &format!("{q}&concept=gotcha&dateStart={since}")).await,
        [bug_lexer]
    );
    // Filters without a query list newest first.
    assert_eq!(found(&app, "type=bugfix").await, [bug_lexer, bug_parser]);
}

#[tokio::test]
async fn summaries_are_hits_unless_a_type_concept_or_file_filter_is_set() {
    let app = spawn_app().await;
    let at = base();
    let s = session(&app, "claude-code", None).await;
    let obs = insert(
        &app,
        at,
        Obs {
            kind: "bugfix",
            title: "Flaky websocket test",
            concepts: vec!["gotcha"],
            files_modified: vec!["src/ws.rs"],
            hours_ago: 2,
            ..Obs::default()
        },
    )
    .await;
    let sum = summary(
        &app,
        s,
        "Fix the flaky websocket reconnect",
        "Backoff was missing.",
        at - Duration::hours(1),
    )
    .await;

    let body = search(&app, "query=websocket").await;
    let mut both = hit_ids(&body);
    both.sort();
    let mut wanted = vec![sum, obs];
    wanted.sort();
    assert_eq!(both, wanted, "{body}");
    let hit = body["results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|h| h["type"] == "summary")
        .unwrap();
    assert_eq!(hit["type"], "summary");
    assert_eq!(hit["summary"]["request"], "Fix the flaky websocket reconnect");
    assert_eq!(hit["summary"]["serverSessionId"], s.to_string());
    assert!(hit.get("observation").is_none());
    // Found by its other fields too.
    assert_eq!(found(&app, "query=backoff").await, [sum]);
    // Summary filters that apply to summaries keep them.
    assert_eq!(
        found(&app, &format!("query=websocket&sessionId={s}")).await,
        [sum]
    );
    assert_eq!(found(&app, "query=websocket&agent=claude-code").await, [sum]);

    for filter in ["type=bugfix", "concept=gotcha", "file=ws.rs"] {
        assert_eq!(
            found(&app, &format!("query=websocket&{filter}")).await,
            [obs],
            "{filter}"
        );
    }
    assert_eq!(found(&app, "query=websocket&summaries=false").await, [obs]);
    // POST /v1/search is observations only.
    let (status, body) = app
        .post(
            "/v1/search",
            Some(&app.ingest_token),
            &json!({"projectId": app.project_id, "query": "websocket"}),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(ids_of(&body["observations"]), [obs]);
}

#[tokio::test]
async fn pages_hold_every_hit_once_and_do_not_shift_when_memories_arrive() {
    let app = spawn_app().await;
    let at = base();
    let mut all = vec![];
    for i in 0..10 {
        all.push(
            insert(
                &app,
                at,
                Obs {
                    title: "Paging check",
                    hours_ago: 24 * i,
                    ..Obs::default()
                },
            )
            .await,
        );
    }
    // Ties of equal score and time are broken by id, stably.
    all.push(
        insert(
            &app,
            at,
            Obs {
                title: "Paging check",
                hours_ago: 24 * 10,
                ..Obs::default()
            },
        )
        .await,
    );
    all.push(
        insert(
            &app,
            at,
            Obs {
                title: "Paging check",
                hours_ago: 24 * 10,
                ..Obs::default()
            },
        )
        .await,
    );
    let one_page = found(&app, "query=paging&limit=100").await;
    assert_eq!(one_page.len(), 12);
    assert_eq!(&one_page[..10], &all[..10], "newest first among equal matches");

    let mut walked = vec![];
    let mut cursor: Option<String> = None;
    let mut pages = 0;
    loop {
        let params = match &cursor {
            Some(c) => format!("query=paging&limit=3&cursor={c}"),
            None => "query=paging&limit=3".into(),
        };
        let body = search(&app, &params).await;
        let ids = hit_ids(&body);
        pages += 1;
        assert!(ids.len() <= 3);
        walked.extend(ids);
        match body["nextCursor"].as_str() {
            Some(next) => cursor = Some(next.to_string()),
            None => break,
        }
        assert!(pages < 10, "the walk ends");
    }
    assert_eq!(pages, 4);
    assert_eq!(walked, one_page, "every hit exactly once, in order");

    // A new matching memory between page 1 and page 2 does not shift page 2…
    let page1 = search(&app, "query=paging&limit=3").await;
    assert_eq!(hit_ids(&page1), &one_page[..3]);
    let next = page1["nextCursor"].as_str().unwrap().to_string();
    let (status, res) = app
        .post(
            "/v1/memories",
            Some(&app.ingest_token),
            &json!({"projectId": app.project_id, "content": "Paging check, newest of all"}),
        )
        .await;
    assert_eq!(status, 201, "{res}");
    let newest: Uuid = res["memory"]["id"].as_str().unwrap().parse().unwrap();
    let page2 = search(&app, &format!("query=paging&limit=3&cursor={next}")).await;
    assert_eq!(hit_ids(&page2), &one_page[3..6]);
    // …nor any later page: the walk as of page 1 never sees it.
    let mut rest = hit_ids(&page2);
    let mut cursor = page2["nextCursor"].as_str().map(str::to_string);
    while let Some(c) = cursor {
        let body = search(&app, &format!("query=paging&limit=3&cursor={c}")).await;
        rest.extend(hit_ids(&body));
        cursor = body["nextCursor"].as_str().map(str::to_string);
    }
    assert_eq!(rest, &one_page[3..]);
    // A fresh search finds it (ranked by its words, recency only breaking near-ties).
    assert!(found(&app, "query=paging&limit=100").await.contains(&newest));

    // An offset is a cursor too (what MCP's `offset` is).
    let fresh = found(&app, "query=paging&limit=100").await;
    assert_eq!(found(&app, "query=paging&limit=2&offset=4").await, &fresh[4..6]);
}

#[tokio::test]
async fn another_projects_memories_never_appear() {
    let app = spawn_app().await;
    let at = base();
    let (status, y) = app
        .post(
            "/v1/admin/projects",
            Some(&app.admin_token),
            &json!({"slug": "project-y"}),
        )
        .await;
    assert_eq!(status, 201, "{y}");
    let y_id: Uuid = y["project"]["id"].as_str().unwrap().parse().unwrap();
    let y_token = app
        .mint(json!({"name": "y reader", "projectId": y_id, "scopes": ["read"]}))
        .await;

    let mine = insert(
        &app,
        at,
        Obs {
            title: "Quokka migration",
            ..Obs::default()
        },
    )
    .await;
    let theirs = insert_in(
        &app,
        app.team_id,
        y_id,
        at,
        Obs {
            title: "Quokka migration",
            ..Obs::default()
        },
    )
    .await;

    assert_eq!(found(&app, "query=quokka").await, [mine]);
    assert_eq!(found(&app, "").await, [mine]);
    let y = Some(y_token.as_str());
    let (status, body) = app.get("/v1/search?query=quokka", y).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(hit_ids(&body), [theirs]);
    // The team's admin token names either project.
    let (_, body) = app
        .get(
            &format!("/v1/search?query=quokka&projectId={y_id}"),
            Some(&app.admin_token),
        )
        .await;
    assert_eq!(hit_ids(&body), [theirs]);
    let (_, body) = app
        .get(
            "/v1/search?query=quokka&projectId=default",
            Some(&app.admin_token),
        )
        .await;
    assert_eq!(hit_ids(&body), [mine]);
    let (status, body) = app.get("/v1/search?query=quokka", Some(&app.admin_token)).await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (400, Some("project_required"))
    );

    // Y's token cannot name the default project, by id or slug, on any route.
    for project in [app.project_id.to_string(), "default".into()] {
        for path in [
            format!("/v1/search?query=quokka&projectId={project}"),
            format!("/v1/timeline?anchor={mine}&projectId={project}"),
            format!("/v1/observations?ids={mine}&projectId={project}"),
        ] {
            let (status, body) = app.get(&path, y).await;
            assert_eq!(
                (status, body["error"]["code"].as_str()),
                (404, Some("project_not_found")),
                "{path}"
            );
        }
        let (status, body) = app
            .post("/v1/search", y, &json!({"projectId": project, "query": "quokka"}))
            .await;
        assert_eq!(
            (status, body["error"]["code"].as_str()),
            (404, Some("project_not_found"))
        );
    }
    // Nor reach the default project's rows by id from its own.
    let (status, body) = app.get(&format!("/v1/timeline?anchor={mine}"), y).await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (404, Some("observation_not_found"))
    );
    let (status, body) = app.get(&format!("/v1/observations?ids={mine},{theirs}"), y).await;
    assert_eq!(status, 200);
    assert_eq!(ids_of(&body["observations"]), [theirs]);
    let (_, body) = app
        .get(&format!("/v1/timeline?anchor={theirs}&before=50&after=50"), y)
        .await;
    assert_eq!(ids_of(&body["observations"]), [theirs]);
}

#[tokio::test]
async fn the_timeline_shows_neighbours_in_time_order_around_an_anchor_or_a_query() {
    let app = spawn_app().await;
    let at = base();
    // t[0] oldest … t[6] newest.
    let mut t = vec![];
    for (i, title) in ["one", "two", "three", "Walrus four", "five", "six", "seven"]
        .into_iter()
        .enumerate()
    {
        t.push(
            insert(
                &app,
                at,
                Obs {
                    title,
                    hours_ago: 10 - i as i64,
                    ..Obs::default()
                },
            )
            .await,
        );
    }
    let timeline = |params: String| {
        let app = &app;
        async move {
            let (status, body) = app
                .get(&format!("/v1/timeline?{params}"), Some(&app.ingest_token))
                .await;
            assert_eq!(status, 200, "{params}: {body}");
            (
                body["anchor"].as_str().unwrap().parse::<Uuid>().unwrap(),
                ids_of(&body["observations"]),
            )
        }
    };
    assert_eq!(
        timeline(format!("anchor={}&before=2&after=3", t[3])).await,
        (t[3], t[1..7].to_vec())
    );
    assert_eq!(
        timeline(format!("anchor={}&before=0&after=0", t[3])).await,
        (t[3], vec![t[3]])
    );
    assert_eq!(
        timeline(format!("anchor={}&before=5&after=1", t[1])).await,
        (t[1], t[0..3].to_vec())
    );
    assert_eq!(
        timeline(format!("anchor={}&before=1&after=50", t[5])).await,
        (t[5], t[4..7].to_vec())
    );
    // Default: 5 on each side.
    assert_eq!(
        timeline(format!("anchor={}", t[6])).await,
        (t[6], t[1..7].to_vec())
    );
    // Anchored by the best hit of a query.
    assert_eq!(
        timeline("query=walrus&before=1&after=1".into()).await,
        (t[3], t[2..5].to_vec())
    );

    let tok = Some(app.ingest_token.as_str());
    for params in [format!("anchor={}", Uuid::now_v7()), "query=narwhal".into()] {
        let (status, body) = app.get(&format!("/v1/timeline?{params}"), tok).await;
        assert_eq!(
            (status, body["error"]["code"].as_str()),
            (404, Some("observation_not_found")),
            "{params}"
        );
    }
    for params in [
        format!("anchor={}&before=51", t[3]),
        format!("anchor={}&after=-1", t[3]),
        "anchor=not-a-uuid".into(),
        "".into(),
        format!("anchor={}&query=walrus", t[3]),
    ] {
        let (status, body) = app.get(&format!("/v1/timeline?{params}"), tok).await;
        assert_eq!(
            (status, body["error"]["code"].as_str()),
            (422, Some("invalid_field")),
            "{params}: {body}"
        );
    }
}

#[tokio::test]
async fn observations_by_ids_come_in_the_order_asked_and_unknown_ids_are_skipped() {
    let app = spawn_app().await;
    let at = base();
    let a = insert(
        &app,
        at,
        Obs {
            title: "A",
            narrative: "first",
            ..Obs::default()
        },
    )
    .await;
    let b = insert(
        &app,
        at,
        Obs {
            title: "B",
            ..Obs::default()
        },
    )
    .await;
    let c = insert(
        &app,
        at,
        Obs {
            title: "C",
            ..Obs::default()
        },
    )
    .await;
    let unknown = Uuid::now_v7();
    let tok = Some(app.ingest_token.as_str());
    let (status, body) = app
        .get(&format!("/v1/observations?ids={c},{unknown},%20{a},{b},{c}"), tok)
        .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(ids_of(&body["observations"]), [c, a, b]);
    // A generated observation's `content` reads as its title, then its narrative.
    assert_eq!(body["observations"][1]["content"], "A\n\nfirst");
    assert_eq!(body["observations"][1]["metadata"]["narrative"], "first");

    let many: Vec<String> = (0..101).map(|_| Uuid::now_v7().to_string()).collect();
    for ids in [many.join(","), "nope".into(), "".into()] {
        let (status, body) = app.get(&format!("/v1/observations?ids={ids}"), tok).await;
        assert_eq!(
            (status, body["error"]["code"].as_str()),
            (422, Some("invalid_field")),
            "{body}"
        );
    }
    let (status, body) = app
        .get(&format!("/v1/observations?ids={}", many[..100].join(",")), tok)
        .await;
    assert_eq!(
        (status, body["observations"].as_array().map(Vec::len)),
        (200, Some(0))
    );
}

#[tokio::test]
async fn bad_input_is_a_coded_4xx_and_empty_queries_are_not_errors() {
    let app = spawn_app().await;
    insert(
        &app,
        base(),
        Obs {
            title: "The parser",
            ..Obs::default()
        },
    )
    .await;
    let tok = Some(app.ingest_token.as_str());
    for (params, code) in [
        ("limit=0", "invalid_field"),
        ("limit=101", "invalid_field"),
        ("cursor=not-a-cursor", "invalid_cursor"),
        ("cursor=eyJvIjotMX0", "invalid_cursor"), // {"o":-1}
        ("cursor=e30&offset=1", "invalid_field"),
        ("offset=-1", "invalid_field"),
        ("dateStart=yesterday", "invalid_field"),
        ("dateEnd=2026-13-40", "invalid_field"),
        ("dateStart=2026-03-02&dateEnd=2026-03-01", "invalid_field"),
        ("orderBy=best", "invalid_field"),
        ("sessionId=42", "invalid_field"),
    ] {
        let (status, body) = app.get(&format!("/v1/search?query=parser&{params}"), tok).await;
        assert_eq!(
            (status, body["error"]["code"].as_str()),
            (422, Some(code)),
            "{params}: {body}"
        );
    }
    let (status, body) = app.get("/v1/search?limit=ten", tok).await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (400, Some("invalid_query"))
    );

    // Punctuation, stop words, operators alone, odd quoting: empty results, never an error.
    for query in [
        "!!!",
        "the",
        "%22%22",
        "-",
        "or",
        "%26%7C!()%3A*",
        "%22unclosed",
        "a%00b",
        "'%3B%20DROP%20TABLE%20x%3B--",
    ] {
        let body = search(&app, &format!("query={query}")).await;
        assert_eq!(body["results"], json!([]), "{query}: {body}");
    }
    assert_eq!(
        search(&app, "query=%22the%20parser").await["results"]
            .as_array()
            .unwrap()
            .len(),
        1
    );

    let (status, body) = app.get("/v1/search", None).await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (401, Some("missing_credentials"))
    );
    let ingest_only = app
        .mint(json!({"name": "writer", "projectId": app.project_id, "scopes": ["ingest"]}))
        .await;
    for path in [
        "/v1/search",
        "/v1/timeline?query=parser",
        "/v1/observations?ids=x",
    ] {
        let (status, body) = app.get(path, Some(&ingest_only)).await;
        assert_eq!(
            (status, body["error"]["code"].as_str()),
            (403, Some("insufficient_scope")),
            "{path}"
        );
    }
}

#[tokio::test]
async fn post_search_answers_claude_mems_shape() {
    let app = spawn_app().await;
    let at = base();
    let claude = session(&app, "claude-code", Some("claude")).await;
    let other = session(&app, "claude-code", Some("desktop")).await;
    let generated = insert(
        &app,
        at,
        Obs {
            kind: "bugfix",
            title: "Retry budget fix",
            facts: vec!["retries capped at 5"],
            session: Some(claude),
            hours_ago: 1,
            ..Obs::default()
        },
    )
    .await;
    let elsewhere = insert(
        &app,
        at,
        Obs {
            title: "Retry storms",
            session: Some(other),
            hours_ago: 2,
            ..Obs::default()
        },
    )
    .await;
    let tok = Some(app.ingest_token.as_str());

    let (status, body) = app
        .post(
            "/v1/search",
            tok,
            &json!({"projectId": app.project_id, "query": "retry", "limit": 10}),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        body.as_object().unwrap().keys().collect::<Vec<_>>(),
        ["observations"]
    );
    let mut got = ids_of(&body["observations"]);
    got.sort();
    let mut wanted = vec![generated, elsewhere];
    wanted.sort();
    assert_eq!(got, wanted, "both, ranked by their words");
    let o = body["observations"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["id"] == generated.to_string())
        .unwrap();
    for field in [
        "id",
        "projectId",
        "teamId",
        "serverSessionId",
        "kind",
        "content",
        "metadata",
        "createdAtEpoch",
        "updatedAtEpoch",
    ] {
        assert!(o.get(field).is_some(), "{field} in {o}");
    }
    assert_eq!(o["kind"], "bugfix");
    assert_eq!(o["serverSessionId"], claude.to_string());
    assert_eq!(o["content"], "Retry budget fix\n\n- retries capped at 5");
    assert_eq!(o["createdAtEpoch"], (at - Duration::hours(1)).timestamp_millis());

    let (_, body) = app
        .post(
            "/v1/search",
            tok,
            &json!({"projectId": "default", "query": "retry", "platformSource": "claude"}),
        )
        .await;
    assert_eq!(ids_of(&body["observations"]), [generated]);
    let (_, body) = app
        .post(
            "/v1/search",
            tok,
            &json!({"projectId": app.project_id, "query": "retry budget", "limit": 1}),
        )
        .await;
    assert_eq!(ids_of(&body["observations"]), [generated]);
    let (_, body) = app
        .post(
            "/v1/search",
            tok,
            &json!({"projectId": app.project_id, "query": ""}),
        )
        .await;
    assert_eq!(
        ids_of(&body["observations"]),
        [generated, elsewhere],
        "a blank query lists the newest"
    );

    for limit in [0, 101] {
        let (status, body) = app
            .post(
                "/v1/search",
                tok,
                &json!({"projectId": app.project_id, "query": "retry", "limit": limit}),
            )
            .await;
        assert_eq!(
            (status, body["error"]["code"].as_str()),
            (422, Some("invalid_field"))
        );
    }
    let (status, body) = app
        .post("/v1/search", tok, &json!({"projectId": app.project_id}))
        .await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (422, Some("invalid_body"))
    );
}

#[tokio::test]
async fn a_question_finds_memories_with_any_of_its_words_and_more_words_rank_higher() {
    let app = spawn_app().await;
    let at = base();
    let all_three = insert(
        &app,
        at,
        Obs {
            title: "CI",
            narrative: "The nightly build broke after the cache key changed.",
            hours_ago: 2,
            ..Obs::default()
        },
    )
    .await;
    let two = insert(
        &app,
        at,
        Obs {
            title: "CI",
            narrative: "Moved the nightly build to a bigger runner.",
            hours_ago: 1,
            ..Obs::default()
        },
    )
    .await;
    let one = insert(
        &app,
        at,
        Obs {
            title: "CI",
            narrative: "Release build is reproducible now.",
            ..Obs::default()
        },
    )
    .await;
    let unrelated = insert(
        &app,
        at,
        Obs {
            title: "Docs",
            narrative: "Rewrote the onboarding guide.",
            ..Obs::default()
        },
    )
    .await;

    // The memory that says the nightly build broke comes first, then the one
    // with two of the words, then the one with one.
    let body = search(&app, "query=what%20broke%20the%20nightly%20build%3F").await;
    assert_eq!(hit_ids(&body), [all_three, two, one]);
    let scores = scores(&body);
    assert!(scores[0] > scores[1] && scores[1] > scores[2], "{scores:?}");
    assert!(!hit_ids(&body).contains(&unrelated));
    // A word no memory has ("yesterday") does not stop the others from matching.
    assert_eq!(
        found(&app, "query=what%20broke%20our%20nightly%20build%20yesterday").await,
        [all_three, two, one]
    );

    // Exclusions still exclude, whatever else matches; phrases stay phrases.
    assert_eq!(found(&app, "query=nightly%20build%20-broke").await, [two, one]);
    assert_eq!(
        found(&app, "query=%22nightly%20build%22%20-%22build%20broke%22").await,
        [two]
    );
    assert_eq!(
        found(&app, "query=%22build%20nightly%22%20onboarding").await,
        [unrelated]
    );
    // Only exclusions: nothing is asked for, nothing is found.
    assert_eq!(found(&app, "query=-broke").await, Vec::<Uuid>::new());
}

/// `n` observations with "gadget" in the narrative, 1..=n hours old.
async fn gadgets(app: &TestApp, n: i64, at: DateTime<Utc>) {
    gadgets_every(app, n, 1, at).await
}

/// `n` observations with "gadget" in the narrative, `hours`, 2 × `hours` …
/// n × `hours` old.
async fn gadgets_every(app: &TestApp, n: i64, hours: i64, at: DateTime<Utc>) {
    sqlx::query(
        "INSERT INTO observations (id, team_id, project_id, generation_key, kind, title, narrative,
             provider, model, created_at, updated_at)
         SELECT gen_random_uuid(), $1, $2, 'test:gadget:' || g || ':' || $2, 'discovery', 'Note',
                'The gadget was checked.', 'heuristic', 'none', $3 - g * $5::int * interval '1 hour',
                $3 - g * $5::int * interval '1 hour'
         FROM generate_series(1, $4::int) g",
    )
    .bind(app.team_id)
    .bind(app.project_id)
    .bind(at)
    .bind(n as i32)
    .bind(hours as i32)
    .execute(&app.pool)
    .await
    .unwrap();
}

#[tokio::test]
async fn every_match_is_ranked_however_many_newer_ones_there_are() {
    // 200 recent matches and a month-old title match: the old one is not cut
    // by a window of newest matches; its title word ranks it first.
    let app = spawn_app().await;
    let at = base();
    gadgets(&app, 200, at).await;
    let old_title = insert(
        &app,
        at,
        Obs {
            title: "Gadget registry",
            hours_ago: 24 * 30,
            ..Obs::default()
        },
    )
    .await;
    assert_eq!(found(&app, "query=gadget&limit=1").await, [old_title]);
    let all = found(&app, "query=gadget&orderBy=oldest&limit=1").await;
    assert_eq!(all, [old_title], "unranked orders see every match too");
}

#[tokio::test]
async fn a_filter_the_engine_does_not_hold_narrows_and_every_match_is_still_ranked() {
    // 250 newer routine notes on the same file, concept and agent, all with
    // the query's common words, and a month-old root cause: a file, concept,
    // agent or phrase filter (answered by Postgres) narrows the search, and
    // the engine ranks every memory left, so the rare word puts the old one
    // first. A window of the newest 200 matches would never rank it.
    let app = spawn_app().await;
    let at = base();
    let cursor = session(&app, "cursor", None).await;
    sqlx::query(
        "INSERT INTO observations (id, team_id, project_id, session_id, generation_key, kind, title, narrative,
             concepts, files_modified, provider, model, created_at, updated_at)
         SELECT gen_random_uuid(), $1, $2, $3, 'test:routine:' || g, 'change', 'Deploy pipeline run ' || g,
                'The deploy pipeline ran again.', '{how-it-works}', '{deploy/pipeline.yaml}',
                'heuristic', 'none', $4 - g * interval '1 hour', $4 - g * interval '1 hour'
         FROM generate_series(1, 250) g",
    )
    .bind(app.team_id)
    .bind(app.project_id)
    .bind(cursor)
    .bind(at)
    .execute(&app.pool)
    .await
    .unwrap();
    let root_cause = insert(
        &app,
        at,
        Obs {
            kind: "bugfix",
            title: "Deploy pipeline failed",
            narrative: "The deploy pipeline failed because the registry-creds secret had expired.",
            concepts: vec!["how-it-works"],
            files_modified: vec!["deploy/pipeline.yaml"],
            session: Some(cursor),
            hours_ago: 24 * 30,
            ..Obs::default()
        },
    )
    .await;
    // The same rare word on another file: a file filter leaves it out.
    let elsewhere = insert(
        &app,
        at,
        Obs {
            title: "Rotation script",
            narrative: "scripts/rotate-registry.sh renews registry-creds.",
            files_modified: vec!["scripts/rotate-registry.sh"],
            ..Obs::default()
        },
    )
    .await;
    let q = "query=why%20did%20the%20deploy%20pipeline%20fail%20registry-creds&summaries=false&limit=5";
    for filter in ["file=pipeline.yaml", "concept=how-it-works", "agent=cursor"] {
        let hits = found(&app, &format!("{q}&{filter}")).await;
        assert_eq!(hits.first(), Some(&root_cause), "{filter}: {hits:?}");
        assert!(!hits.contains(&elsewhere), "{filter}: {hits:?}");
    }
    // A quoted phrase: every memory that holds it (or the other words) is
    // ranked, not the newest 200; the two with the rare word come first.
    let phrase = "query=%22deploy%20pipeline%22%20registry-creds&summaries=false&limit=5";
    let hits = found(&app, phrase).await;
    assert_eq!(
        sorted(hits[..2].to_vec()),
        sorted(vec![root_cause, elsewhere]),
        "{hits:?}"
    );
    // Pages of a narrowed search walk every memory it was narrowed to, once.
    let mut seen = std::collections::HashSet::new();
    let mut next = Some(String::new());
    while let Some(cursor) = next {
        let body = search(
            &app,
            &format!("query=deploy&file=pipeline.yaml&summaries=false&limit=100{cursor}"),
        )
        .await;
        for id in hit_ids(&body) {
            assert!(seen.insert(id), "{id} twice");
        }
        next = body["nextCursor"].as_str().map(|c| format!("&cursor={c}"));
    }
    assert_eq!(seen.len(), 251);
    assert!(seen.contains(&root_cause) && !seen.contains(&elsewhere));
}

#[tokio::test]
async fn matches_across_every_ring_of_days_are_all_ranked_and_paged() {
    // 250 matches a day and a bit apart reach back 260 days. Two title
    // matches sit among them, the older past the 200th newest match: both
    // are ranked (first and second), and paging walks all 252 matches.
    // (Their titles differ: a memory that repeats a better one word for
    // word gives way among the first hits; `cairn-retrieval` tests that.)
    let app = spawn_app().await;
    let at = base();
    gadgets_every(&app, 250, 25, at).await;
    let title = |title, hours_ago| Obs {
        title,
        hours_ago,
        ..Obs::default()
    };
    let newer = insert(&app, at, title("Gadget registry", 25 * 199 + 12)).await;
    let older = insert(&app, at, title("Registry gadget", 25 * 200 + 12)).await;
    let body = search(&app, "query=gadget&limit=100").await;
    let ids = hit_ids(&body);
    assert_eq!(
        &ids[..2],
        [newer, older],
        "title matches first, the newer on a near-tie"
    );
    let mut seen = ids.len();
    let mut cursor = body["nextCursor"].as_str().map(str::to_owned);
    while let Some(c) = cursor {
        let page = search(&app, &format!("query=gadget&limit=100&cursor={c}")).await;
        seen += hit_ids(&page).len();
        cursor = page["nextCursor"].as_str().map(str::to_owned);
    }
    assert_eq!(seen, 252, "every match is on some page");
}
