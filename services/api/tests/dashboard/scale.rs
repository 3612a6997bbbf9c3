//! The measurement behind the README's dashboard figures: first load and
//! search-to-render in Chromium on a project with 100,000 observations.
//! Ignored by default (seeding takes a while); run with
//! `cargo test -p cairn-api --test dashboard scale -- --ignored --nocapture`.

use std::time::Instant;

use cairn_testkit::spawn_app;
use fantoccini::Locator;
use serde_json::json;

use crate::support::{browser, js, sign_in_browser, wait_for, wait_text};

const OBSERVATIONS: i64 = 100_000;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

#[tokio::test]
#[ignore = "seeds 100,000 observations; run for the README figures"]
async fn first_load_and_search_to_render_on_100k_observations() {
    let app = spawn_app().await;
    let seeded = Instant::now();
    sqlx::query(
        "INSERT INTO observations (id, team_id, project_id, generation_key, origin, kind, title, narrative, content, concepts, created_at)
         SELECT gen_random_uuid(), $1, $2, 'scale:' || g, 'generated',
                (ARRAY['discovery','decision','bugfix','feature','change'])[1 + g % 5],
                'Observation ' || g || ' about ' || (ARRAY['the linker','the cache','retries','the parser','migrations','tokens'])[1 + g % 6],
                'Narrative ' || g || ': ' || md5(g::text) || ' ' || (ARRAY['mold speeds up linking','moka evicts by weight','backoff with jitter','nom combinators','sqlx offline mode','HS256 signing'])[1 + g % 6],
                'Content ' || g || ' ' || md5((g * 7)::text),
                ARRAY[(ARRAY['build','perf','reliability','parsing','schema','auth'])[1 + g % 6]],
                now() - (g || ' seconds')::interval
         FROM generate_series(1, $3::int) g",
    )
    .bind(app.team_id)
    .bind(app.project_id)
    .bind(OBSERVATIONS as i32)
    .execute(&app.pool)
    .await
    .unwrap();
    sqlx::query("ANALYZE observations")
        .execute(&app.pool)
        .await
        .unwrap();
    println!(
        "seeded {OBSERVATIONS} observations in {:.1} s",
        seeded.elapsed().as_secs_f64()
    );

    let b = browser(1280, 900).await;
    let c = &b.client;
    sign_in_browser(c, &app.base, &app.admin_token).await;
    let mut loads = Vec::new();
    let mut searches = Vec::new();
    for (i, word) in ["linker", "jitter", "migrations", "parser", "cache"]
        .iter()
        .enumerate()
    {
        // First load: a fresh navigation until the search page is usable
        // (settled: its newest observations drawn).
        let started = Instant::now();
        c.goto(&format!("{}/?run={i}#/observations", app.base))
            .await
            .unwrap();
        wait_for(c, "#query").await;
        loads.push(started.elapsed().as_secs_f64() * 1000.0);
        let query = c.find(Locator::Css("#query")).await.unwrap();
        query.send_keys(word).await.unwrap();
        // Search to render, timed in the page: submit → the hits in the DOM
        // (the newest observations, shown on arrival, cleared first).
        let ms = js(
            c,
            "document.querySelector('#results').replaceChildren();
             const t0 = performance.now();
             document.querySelector('#search button[type=submit]').click();
             return new Promise((resolve) => {
               const check = () => document.querySelector('#results .hits li') ? resolve(performance.now() - t0) : requestAnimationFrame(check);
               check();
             });",
        )
        .await;
        searches.push(ms.as_f64().unwrap());
        wait_text(c, "a.hit-title", "").await;
    }
    let (_, r) = app
        .get(
            &format!("/v1/search?projectId={}&query=linker&limit=20", app.project_id),
            Some(&app.admin_token),
        )
        .await;
    assert_eq!(
        r["results"].as_array().unwrap().len(),
        20,
        "{}",
        json!(r["results"].as_array().map(|a| a.len()))
    );
    println!(
        "dashboard on {OBSERVATIONS} observations: first load median {:.0} ms (runs {loads:.0?}), search-to-render median {:.0} ms (runs {searches:.0?})",
        median(loads.clone()),
        median(searches.clone())
    );
}
